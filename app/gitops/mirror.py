"""Bare mirror cache under the data directory, and temporary worktrees on it.

One bare repository per remote, fetched rather than re-cloned. Integrations work
in their own worktree of that mirror, removed when they finish; worktrees left by
a process that died are swept the next time the mirror is used.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from app.gitops.digest import sha256_hex
from app.gitops.flock import lock_file, unlock_file
from app.gitops.runner import GitError, GitRunner

_UNSAFE = re.compile(r"[^0-9A-Za-z._-]+")
MIRROR_LOCK_TIMEOUT = 300.0
KEPT_PREFIX = "kept-"


def normalise_remote(repo: str) -> str:
    """A remote as git should see it: local paths made absolute, URLs unchanged."""
    if "://" in repo or re.match(r"^[\w.-]+@[\w.-]+:", repo):
        return repo
    return str(Path(repo).expanduser().resolve())


class MirrorBusy(RuntimeError):
    """Another process kept the mirror locked past the deadline."""


class Mirror:
    """One bare mirror of `remote` at `path`; `origin` is the remote, without credentials."""

    def __init__(self, root: Path, remote: str, runner: GitRunner) -> None:
        self.remote = remote
        self.runner = runner
        digest = sha256_hex(remote)[:16]
        name = _UNSAFE.sub("-", remote.rstrip("/").rsplit("/", 1)[-1]).strip("-.")[:40]
        self.path = root / "mirrors" / f"{name or 'repo'}-{digest}.git"
        self.worktrees = root / "worktrees" / self.path.stem
        self._lock_path = root / "mirrors" / f"{self.path.name}.lock"

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Mirror-wide mutations (fetch, worktree add/remove) from any process, one at a time."""
        self._lock_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = lock_file(self._lock_path, MIRROR_LOCK_TIMEOUT)
        except TimeoutError:
            raise MirrorBusy(
                f"the mirror {self.path} stayed locked for {MIRROR_LOCK_TIMEOUT:g} s"
            ) from None
        try:
            yield
        finally:
            unlock_file(fd)

    def _ensure(self) -> None:
        if (self.path / "HEAD").is_file():
            return
        tmp = self.path.with_name(f".{self.path.name}.{os.urandom(16).hex()}")
        try:
            self.runner.run("init", "--bare", "--quiet", str(tmp))
            self.runner.run("config", "remote.origin.url", self.remote, cwd=tmp)
            tmp.replace(self.path)
        finally:
            if tmp.exists():
                _rmtree(tmp)

    def fetch(self, branches: Sequence[str]) -> None:
        """Fetch `branches` from origin into `refs/remotes/origin/*` (forced, no tags)."""
        specs = [f"+refs/heads/{b}:refs/remotes/origin/{b}" for b in branches]
        with self.locked():
            self._ensure()
            self.runner.run("fetch", "--quiet", "--no-tags", "origin", *specs, cwd=self.path)

    @contextmanager
    def worktree(self, start: str) -> Iterator[Path]:
        """A fresh worktree detached at `start`, always removed afterwards."""
        path = self.worktrees / f"{os.getpid()}-{os.urandom(6).hex()}"
        with self.locked():
            self._sweep()
            path.parent.mkdir(parents=True, exist_ok=True)
            self.runner.run(
                "worktree", "add", "--detach", "--quiet", str(path), start, cwd=self.path
            )
        try:
            yield path
        finally:
            with self.locked():
                self._remove(path)

    @contextmanager
    def kept_worktree(self, name: str, start: str) -> Iterator[Path]:
        """A worktree kept between integrations of one base (callers hold its merge lock).

        Adding and removing a worktree per landing costs more than the landing's
        own git work; callers reset it with `switch --discard-changes` instead.
        """
        digest = sha256_hex(name)[:8]
        path = self.worktrees / f"{KEPT_PREFIX}{_UNSAFE.sub('-', name)[:40]}-{digest}"
        if not (path / ".git").is_file():
            with self.locked():
                self._remove(path)
                path.parent.mkdir(parents=True, exist_ok=True)
                self._ensure()
                self.runner.run(
                    "worktree", "add", "--detach", "--quiet", str(path), start, cwd=self.path
                )
        yield path

    def delete_branches(self, names: Sequence[str]) -> None:
        """Drop local branches an integration made; missing ones are fine."""
        with self.locked(), contextlib.suppress(GitError):
            self.runner.run("branch", "-D", "--quiet", *names, cwd=self.path, check=False)

    def _remove(self, path: Path) -> None:
        """Best effort, every step: a failed git call must not keep the directory."""
        with contextlib.suppress(GitError):
            self.runner.run("worktree", "remove", "--force", "--force", str(path), cwd=self.path,
                            check=False)  # fmt: skip
        _rmtree(path)
        with contextlib.suppress(GitError):
            self.runner.run("worktree", "prune", cwd=self.path, check=False)

    def _sweep(self) -> None:
        """Remove worktrees whose creating process is gone (a crash or a kill)."""
        from app.liveness import pid_alive  # not on a landing's path (kept worktrees)

        if self.worktrees.is_dir():
            for entry in self.worktrees.iterdir():
                if entry.name.startswith(KEPT_PREFIX):
                    continue
                pid = entry.name.split("-", 1)[0]
                if not (pid.isdigit() and pid_alive(int(pid))):
                    self._remove(entry)
        with contextlib.suppress(GitError):
            self.runner.run("worktree", "prune", cwd=self.path, check=False)


def _rmtree(path: Path) -> None:
    import shutil  # only when a directory must go, never on a landing in a kept worktree

    shutil.rmtree(path, ignore_errors=True)


__all__ = ["Mirror", "MirrorBusy", "normalise_remote"]
