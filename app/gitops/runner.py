"""One way to run git: a subprocess with a deadline, a configuration nobody else steers,
and redaction.

Every git call in ODW (the integrator, local mode, evidence collection and the
runner beside the agent) goes through `GitRunner.run`, so every call has a
deadline (killed with its whole process group when it passes), never prompts on
a terminal, never uses a stored credential helper, and never lets a secret reach
an exception message or a log line.

The configuration is fixed here too. System and global files are not read, and
`HARDENED_CONFIG` overrides (as command-line configuration in `GIT_CONFIG_COUNT`
form, which beats any file) every single-valued
key a repository's own `.git/config` could use to run a program or to send a
push somewhere else: an agent may write that file, and the runner's git calls
after the agent must not obey it. Keys that cannot be overridden that way (their
name embeds a URL or a driver name) are found by `risky_config` instead.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from app.core.values import Value

DEFAULT_TIMEOUT = 30.0  # seed 004: internal git calls
NETWORK_TIMEOUT = 300.0  # fetch, push, ls-remote
REDACTED = "***"

# Applied to every call. No stored credentials (an empty value resets the helper
# list, so a user's `credential.helper=store` never writes our token to disk); no
# hooks, fsmonitor, pager, editor or signing program (each runs a command the
# repository names); a push sends the one refspec it is given (no tags, no
# submodules); no `ext::` transport; credentials are never sent on to the host a
# redirect names; no newline conversion (roadmap edits are byte-exact); no
# automatic gc racing another worktree of the same mirror.
HARDENED_CONFIG: tuple[tuple[str, str], ...] = (
    ("credential.helper", ""),
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.sshCommand", "ssh"),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.autocrlf", "false"),
    ("core.quotePath", "off"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("push.gpgSign", "false"),
    ("push.followTags", "false"),
    ("push.recurseSubmodules", "no"),
    ("submodule.recurse", "false"),
    ("fetch.recurseSubmodules", "false"),
    ("protocol.ext.allow", "never"),
    ("http.followRedirects", "false"),
    ("http.sslVerify", "true"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("advice.detachedHead", "false"),
    ("init.defaultBranch", "main"),
)


# Keys a `-c` cannot neutralise: a URL or a driver name is part of the key, or
# the key pulls in other files. Found in a repository's configuration, they are
# refused (`risky_config`) rather than obeyed.
@functools.cache
def _risky() -> re.Pattern[str]:  # compiled on first use: a landing never reads config
    return re.compile(
        r"""^(
        url\..+\.(insteadof|pushinsteadof)
      | include\.path | includeif\..+
      | filter\..+ | diff\.external | diff\..+\.(textconv|command) | merge\..+\.driver
      | credential\..+ | http\..+\..+ | http\.(proxy|extraheader|sslcainfo|sslcapath|cookiefile)
      | core\.(gitproxy|askpass|worktree|alternaterefscommand|fsmonitor|hookspath|sshcommand)
      | protocol\..+ | remote\..+\.(receivepack|uploadpack|proxy|vcs)
    )$""",
        re.VERBOSE,
    )


# Variables that would point git at another repository, index or configuration.
# (The environment is ODW's own, never the agent's: an operator's GIT_SSH_COMMAND
# for a deploy key is kept.)
_DROPPED_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "SSH_ASKPASS",
)


def redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


def _fixed_env() -> dict[bytes, bytes]:
    """The variables every git child gets whatever the environment says, encoded once."""
    env = {
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
        "LANGUAGE": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_COUNT": str(len(HARDENED_CONFIG)),
    }
    for i, (key, value) in enumerate(HARDENED_CONFIG):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return {os.fsencode(k): os.fsencode(v) for k, v in env.items()}


_FIXED_ENV = _fixed_env()
_DROPPED = tuple(os.fsencode(name) for name in _DROPPED_ENV)
_DROPPED_PREFIXES = (b"GIT_CONFIG_KEY_", b"GIT_CONFIG_VALUE_")


def _child_env() -> dict[bytes, bytes]:
    """This process's environment as every git child of ODW sees it, with
    `HARDENED_CONFIG` as command-line configuration (`GIT_CONFIG_COUNT` form).

    Bytes, as the system holds it: read afresh for every call (a caller may change
    `os.environ` in between) without decoding and re-encoding it each time.
    """
    env = {
        k: v
        for k, v in os.environb.items()
        if not k.startswith(_DROPPED_PREFIXES) and k not in _DROPPED
    }
    env.update(_FIXED_ENV)
    return env


class GitResult(Value):
    """What one git call printed and how it ended (`args` already redacted)."""

    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    def __init__(self, args: tuple[str, ...], returncode: int, stdout: str, stderr: str) -> None:
        super().__init__(args=args, returncode=returncode, stdout=stdout, stderr=stderr)

    def __repr__(self) -> str:
        return f"GitResult(args={self.args!r}, returncode={self.returncode!r})"


def _debug(message: str, *args: object) -> None:
    """Log at DEBUG through `logging` only once something has imported it.

    Nothing can have configured a handler before `logging` is imported, and an
    unconfigured DEBUG record goes nowhere, so a process that never imports it
    (`odw integrate`, once per landing) skips the import and loses no line.
    """
    logging_module = sys.modules.get("logging")
    if logging_module is not None:
        logging_module.getLogger(__name__).debug(message, *args)


class GitError(Exception):
    """A git command failed; the message is already redacted."""

    def __init__(self, args: Sequence[str], returncode: int, stderr: str) -> None:
        self.returncode = returncode
        self.stderr = stderr
        detail = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit {returncode}"
        super().__init__(f"git {' '.join(args)}: {detail}")


class GitTimeout(GitError):
    """A git command passed its deadline and was killed (exit 124 by convention)."""

    def __init__(self, args: Sequence[str], timeout: float, stderr: str) -> None:
        super().__init__(args, 124, stderr)
        self.timeout = timeout
        self.args = (f"git {' '.join(args)}: timed out after {timeout:g} s",)


class GitRunner:
    """Runs git with a per-call deadline and an environment it controls.

    `env` adds variables for the children only (for example the askpass token);
    values listed in `secrets` are replaced by `***` in every message and log line.
    """

    def __init__(
        self,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        env: Mapping[str, str] | None = None,
        secrets: Sequence[str] = (),
        git: str = "git",
    ) -> None:
        if timeout <= 0:
            raise ValueError("git timeout must be positive")
        self.timeout = timeout
        self.git = git
        self._secrets = tuple(s for s in secrets if s)
        self._extra = {os.fsencode(k): os.fsencode(v) for k, v in (env or {}).items()}

    def redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def run(
        self,
        *args: str,
        cwd: Path | str | None = None,
        check: bool = True,
        timeout: float | None = None,
        input: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> GitResult:
        """Run `git <args>`; raise GitError on a non-zero exit when `check`.

        `env` adds variables for this call only (an identity, a private index).
        """
        call = self.start(*args, cwd=cwd, timeout=timeout, input=input, env=env)
        return call.result(check=check)

    def start(
        self,
        *args: str,
        cwd: Path | str | None = None,
        timeout: float | None = None,
        input: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> GitCall:
        """Start `git <args>` and return at once; `result()` waits for it.

        For a call that need not wait for another one (two reads of a mirror):
        its deadline runs from now, and a started call is always waited for
        (`result`) or stopped (`stop`).
        """
        deadline = self.timeout if timeout is None else timeout
        argv = [self.git, *args]
        shown = tuple(self.redact(a) for a in args)
        _debug("git %s (cwd=%s)", " ".join(shown), cwd)
        child_env = _child_env()
        child_env.update(self._extra)
        for key, value in (env or {}).items():
            child_env[os.fsencode(key)] = os.fsencode(value)
        until = time.monotonic() + deadline
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=child_env,
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            raise GitError(shown, 127, self.redact(str(exc.strerror or exc))) from None
        data = None if input is None else input.encode("utf-8", "replace")
        return GitCall(self, proc, shown, deadline, until, _Exchange(proc, data))


class GitCall:
    """A git call started by `GitRunner.start`: its process, arguments and deadline."""

    def __init__(
        self,
        runner: GitRunner,
        proc: subprocess.Popen[bytes],
        shown: tuple[str, ...],
        deadline: float,
        until: float,
        exchange: _Exchange,
    ) -> None:
        self._runner = runner
        self._proc = proc
        self._shown = shown
        self._deadline = deadline
        self._until = until
        self._exchange = exchange

    def result(self, *, check: bool = True) -> GitResult:
        """Wait for the call (its input written, its output read, its exit); GitTimeout
        when its deadline passes first, GitError on a non-zero exit when `check`."""
        proc, exchange, shown, redact = self._proc, self._exchange, self._shown, self._runner.redact
        try:
            exchange.run(self._until)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            with contextlib.suppress(subprocess.TimeoutExpired):
                exchange.run(time.monotonic() + 5)  # what the killed group had still written
            raise GitTimeout(shown, self._deadline, redact(_text(exchange.err))) from None
        except BaseException:
            _kill_group(proc)
            raise
        out, err = redact(_text(exchange.out)), redact(_text(exchange.err))
        result = GitResult(shown, proc.returncode, out, err)
        if check and proc.returncode != 0:
            raise GitError(shown, proc.returncode, _explain(result.stderr))
        return result

    def stop(self) -> None:
        """Kill the call's process group and reap it: its answer is no longer wanted."""
        _kill_group(self._proc)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._exchange.run(time.monotonic() + 5)


_DEFAULT = GitRunner()


def git(
    cwd: Path | str,
    *args: str,
    timeout: float = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
    check: bool = True,
) -> GitResult:
    """`GitRunner().run(*args, cwd=cwd, ...)`: for callers that hold no token."""
    return _DEFAULT.run(*args, cwd=cwd, timeout=timeout, env=env, check=check)


def config_entries(cwd: Path | str) -> dict[str, tuple[str, ...]]:
    """The repository's own configuration (local, worktree, included files), by key."""
    out = git(cwd, "config", "--list", "--includes", "--show-scope", "-z").stdout
    fields = out.split("\0")
    entries: dict[str, list[str]] = {}
    for scope, item in zip(fields[0::2], fields[1::2], strict=False):
        if scope == "command":
            continue
        key, _, value = item.partition("\n")
        entries.setdefault(key.lower(), []).append(value)
    return {k: tuple(v) for k, v in entries.items()}


def risky_config(
    after: Mapping[str, tuple[str, ...]], before: Mapping[str, tuple[str, ...]] | None = None
) -> list[str]:
    """Keys in `after` that could run a program or redirect traffic (sorted).

    With `before`, only keys added or changed since then count: what the
    repository's owner configured before the agent ran is theirs to keep.
    """
    old = before or {}
    return sorted(k for k, v in after.items() if _risky().match(k) and old.get(k) != v)


_REDIRECT = re.compile(r"returned error: (30[12378])\b")


def _explain(stderr: str) -> str:
    """Say plainly when git refused to follow a redirect (credentials never follow one)."""
    found = _REDIRECT.search(stderr)
    if found is None:
        return stderr
    return (
        f"{stderr.rstrip()}\nthe remote answered with a redirect (HTTP {found.group(1)}), "
        "which ODW never follows with credentials (http.followRedirects=false); "
        "point the remote at the final URL"
    )


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


class _Exchange:
    """`Popen.communicate` with a deadline, less the sleeps: input written, output read
    and the exit awaited in `poll`, woken the moment something happens.

    `communicate(timeout=...)` waits for the exit in a loop of growing sleeps
    (the first is 1 ms) that a git call, which closes its pipes just before it
    exits, nearly always enters: about a millisecond of every call, seven times
    a landing. Here the exit wakes a pidfd instead, where the system has them.
    """

    _CHUNK = 65536

    def __init__(self, proc: subprocess.Popen[bytes], data: bytes | None) -> None:
        self.proc = proc
        self._out: list[bytes] = []
        self._err: list[bytes] = []
        self._poll = select.poll()
        self._open: dict[int, list[bytes] | None] = {}  # fd -> its chunks (None: stdin)
        self._data = memoryview(data or b"")
        for stream, chunks in ((proc.stdout, self._out), (proc.stderr, self._err)):
            if stream is not None:
                self._watch(stream.fileno(), select.POLLIN, chunks)
        if proc.stdin is not None:
            if self._data:
                self._watch(proc.stdin.fileno(), select.POLLOUT, None)
            else:
                proc.stdin.close()

    @property
    def out(self) -> bytes:
        return b"".join(self._out)

    @property
    def err(self) -> bytes:
        return b"".join(self._err)

    def _watch(self, fd: int, events: int, chunks: list[bytes] | None) -> None:
        self._poll.register(fd, events)
        self._open[fd] = chunks

    def _done(self, fd: int) -> None:
        """A pipe that ended (output read to its end, input all written): closed now."""
        self._poll.unregister(fd)
        del self._open[fd]
        proc = self.proc
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None and not stream.closed and stream.fileno() == fd:
                with contextlib.suppress(BrokenPipeError):
                    stream.close()

    def run(self, until: float) -> None:
        """Exchange until the pipes close and the child exits; TimeoutExpired at `until`
        (a `time.monotonic()` value). Can be called again after a timeout."""
        while self._open:
            for fd, _ in self._wait(self._poll, until):
                if fd not in self._open:
                    continue
                chunks = self._open[fd]
                if chunks is None:
                    self._write(fd)
                    continue
                data = os.read(fd, self._CHUNK)
                if data:
                    chunks.append(data)
                else:
                    self._done(fd)
        self._reap(until)

    def _write(self, fd: int) -> None:
        try:
            written = os.write(fd, self._data[: select.PIPE_BUF])
        except BrokenPipeError:  # the child stopped reading: what it read is what it gets
            written = len(self._data)
        self._data = self._data[written:]
        if not self._data:
            self._done(fd)

    def _reap(self, until: float) -> None:
        proc = self.proc
        if proc.poll() is not None:
            return
        try:
            pidfd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):  # no pidfd here: subprocess's own (polling) wait
            proc.wait(timeout=max(until - time.monotonic(), 0.0))
            return
        try:
            exited = select.poll()
            exited.register(pidfd, select.POLLIN)
            self._wait(exited, until)
        finally:
            os.close(pidfd)
        proc.wait()

    def _wait(self, poller: select.poll, until: float) -> list[tuple[int, int]]:
        left = until - time.monotonic()
        ready = poller.poll(max(0, int(left * 1000) + 1)) if left > 0 else []
        if not ready:
            raise subprocess.TimeoutExpired(self.proc.args, max(left, 0.0))
        return ready


def _text(data: bytes) -> str:
    """What `text=True` makes of a child's output: UTF-8 (bad bytes replaced), universal
    newlines."""
    return data.decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
