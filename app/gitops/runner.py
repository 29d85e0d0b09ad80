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
import logging
import os
import re
import signal
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

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


def _child_env() -> dict[str, str]:
    """This process's environment as every git child of ODW sees it, with
    `HARDENED_CONFIG` as command-line configuration (`GIT_CONFIG_COUNT` form)."""
    env = dict(os.environ)
    for name in _DROPPED_ENV:
        env.pop(name, None)
    for name in [n for n in env if n.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))]:
        env.pop(name)
    env.update(
        {
            "GIT_TERMINAL_PROMPT": "0",
            "LC_ALL": "C",
            "LANGUAGE": "C",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CONFIG_COUNT": str(len(HARDENED_CONFIG)),
        }
    )
    for i, (key, value) in enumerate(HARDENED_CONFIG):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


@dataclass(frozen=True)
class GitResult:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


class GitError(Exception):
    """A git command failed; the message is already redacted."""

    def __init__(self, args: Sequence[str], returncode: int, stderr: str) -> None:
        self.args_run = tuple(args)
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
        self._extra = dict(env or {})

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
        deadline = self.timeout if timeout is None else timeout
        argv = [self.git, *args]
        shown = tuple(self.redact(a) for a in args)
        log.debug("git %s (cwd=%s)", " ".join(shown), cwd)
        child_env = _child_env()
        child_env.update(self._extra)
        child_env.update(env or {})
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=child_env,
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=True,
            )
        except OSError as exc:
            raise GitError(shown, 127, self.redact(str(exc.strerror or exc))) from None
        try:
            out, err = proc.communicate(input=input, timeout=deadline)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            out, err = _drain(proc)
            raise GitTimeout(shown, deadline, self.redact(err)) from None
        except BaseException:
            _kill_group(proc)
            raise
        result = GitResult(shown, proc.returncode, self.redact(out), self.redact(err))
        if check and proc.returncode != 0:
            raise GitError(shown, proc.returncode, _explain(result.stderr))
        return result


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


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _drain(proc: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        out, err = proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        return "", ""
    return out or "", err or ""
