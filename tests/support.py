"""Helpers every test directory shares: the real `git` as a test author, and a
clock the test moves. (The shared fixtures live in `tests/conftest.py`.)"""

from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

# A fixed author, no system configuration, no prompts, untranslated messages.
GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "Test Author",
    "GIT_COMMITTER_EMAIL": "author@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "LC_ALL": "C",
}


def git(cwd: Path | None, *args: str, check: bool = True, timeout: float = 30) -> str:
    """Run the real `git` in `cwd` as the test author, with no hooks; its stdout as
    written. A failure (with `check`) raises AssertionError naming git's stderr."""
    result = subprocess.run(
        ["git", "-c", "init.defaultBranch=main", "-c", "core.hooksPath=/dev/null", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
    return result.stdout


@dataclass
class FakeClock:
    """Time moves only when the test says so. Called, it is the store's clock;
    `now()` is GitHub's `Clock`. Thread-safe: tokens are minted from many threads."""

    t: float = 1_000_000.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def __call__(self) -> float:
        return self.now()

    def now(self) -> float:
        with self.lock:
            return self.t

    def advance(self, seconds: float) -> None:
        with self.lock:
            self.t += seconds
