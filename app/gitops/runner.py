"""One way to run git: a subprocess with a deadline, a scrubbed environment and redaction.

Every git call in ODW goes through `GitRunner.run`, so every call has a deadline
(30 s by default, killed with its whole process group when it passes), never
prompts on a terminal, never uses a stored credential helper, and never lets a
secret reach an exception message or a log line.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 30.0
REDACTED = "***"

# Options applied to every call: no stored credentials (an empty value resets the
# helper list, so a user's `credential.helper=store` never writes our token to
# disk), no local hooks or signing, no newline conversion (roadmap edits are
# byte-exact), no automatic gc racing another worktree of the same mirror.
_COMMON_CONFIG = (
    "credential.helper=",
    "core.hooksPath=/dev/null",
    "core.autocrlf=false",
    "commit.gpgSign=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "advice.detachedHead=false",
    "init.defaultBranch=main",
)


def redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


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
    """Runs git with a per-call deadline, a fixed identity and an environment it controls.

    `env` adds variables for the child only (for example the askpass token); values
    listed in `secrets` are replaced by `***` in every message and log line.
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
        base = dict(os.environ)
        base.update(
            {
                "GIT_TERMINAL_PROMPT": "0",
                "LC_ALL": "C",
                "LANGUAGE": "C",
                "GIT_CONFIG_NOSYSTEM": "1",
            }
        )
        for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "SSH_ASKPASS"):
            base.pop(name, None)
        base.update(env or {})
        self._env = base

    def redact(self, text: str) -> str:
        return redact(text, self._secrets)

    def run(
        self,
        *args: str,
        cwd: Path | str | None = None,
        check: bool = True,
        timeout: float | None = None,
        input: str | None = None,
    ) -> GitResult:
        """Run `git <args>`; raise GitError on a non-zero exit when `check`."""
        deadline = self.timeout if timeout is None else timeout
        argv = [self.git]
        for item in _COMMON_CONFIG:
            argv += ["-c", item]
        argv += list(args)
        shown = tuple(self.redact(a) for a in args)
        log.debug("git %s (cwd=%s)", " ".join(shown), cwd)
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=self._env,
            stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,
        )
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
            raise GitError(shown, proc.returncode, result.stderr)
        return result


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _drain(proc: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        out, err = proc.communicate(timeout=5)
    except subprocess.TimeoutExpired:
        return "", ""
    return out or "", err or ""
