"""The repository local mode works on, and the origin that is its source of truth.

PATH is any clone with an `origin` remote. Everything ODW decides from is read
from origin (`git ls-remote`, and files at `origin/<base>`), and everything it
keeps for itself lives inside the clone's git directory, so the working tree
and the checked-out branch are never touched. `OriginSnapshot` reads origin
through a throwaway bare repository instead, for dry runs that must not even
update PATH's remote-tracking refs.
"""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from app.gitops.runner import NETWORK_TIMEOUT, GitError, git

REMOTE = "origin"
_SYMREF = re.compile(r"^ref: refs/heads/(?P<branch>\S+)\s+HEAD$", re.MULTILINE)


class RepoError(Exception):
    """PATH cannot be used (not a repository, no origin, origin unreachable)."""


@dataclass(frozen=True)
class LocalRepo:
    path: Path  # the top of the working tree (or the git dir of a bare clone)
    common_dir: Path  # the git directory shared by all worktrees
    origin_url: str  # absolute path or URL of origin
    # Variables for git's network calls only (the App's GIT_ASKPASS and token).
    env: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @classmethod
    def open(cls, path: Path) -> LocalRepo:
        path = Path(path).expanduser()
        if not path.is_dir():
            raise RepoError(f"{path} is not a directory")
        proc = git(path, "rev-parse", "--path-format=absolute", "--git-common-dir", check=False)
        if proc.returncode != 0:
            raise RepoError(f"{path} is not a git repository")
        common = Path(proc.stdout.strip())
        top = git(path, "rev-parse", "--show-toplevel", check=False).stdout.strip()
        url = git(path, "remote", "get-url", REMOTE, check=False)
        if url.returncode != 0 or not url.stdout.strip():
            raise RepoError(f"{path} has no remote named {REMOTE} (local mode needs one)")
        return cls(Path(top) if top else common, common, _absolute(url.stdout.strip(), path))

    @property
    def state_dir(self) -> Path:
        """Where ODW keeps its database, mirror and stage outputs for this clone."""
        return self.common_dir / "odw"

    def origin_heads(self) -> dict[str, str]:
        """Branch name -> sha on origin, read live (never from a cache)."""
        return remote_heads(self.path, self.origin_url, env=self.env)

    def origin_default_branch(self) -> str | None:
        return default_branch(self.path, self.origin_url)

    def fetch(self, *branches: str) -> None:
        specs = [f"+refs/heads/{b}:refs/remotes/{REMOTE}/{b}" for b in branches]
        try:
            git(
                self.path,
                "fetch",
                "--no-tags",
                "--quiet",
                REMOTE,
                *specs,
                timeout=NETWORK_TIMEOUT,
                env=self.env,
            )
        except GitError as exc:
            raise RepoError(f"cannot fetch {', '.join(branches)} from {REMOTE}: {exc}") from None

    def show(self, branch: str, path: str) -> str | None:
        """The file at `origin/<branch>:<path>` after a fetch, or None when absent."""
        return _show(self.path, f"refs/remotes/{REMOTE}/{branch}", path)


class OriginSnapshot:
    """Origin's `base` fetched into a temporary bare repository (dry runs)."""

    def __init__(self, git_dir: Path) -> None:
        self.git_dir = git_dir

    @classmethod
    @contextlib.contextmanager
    def of(cls, origin_url: str, branch: str) -> Iterator[OriginSnapshot]:
        holder = Path(tempfile.mkdtemp(prefix="odw-dry-run-"))
        try:
            git(holder, "init", "--quiet", "--bare", str(holder / "snap.git"))
            snap = holder / "snap.git"
            try:
                git(
                    snap,
                    "fetch",
                    "--no-tags",
                    "--quiet",
                    "--depth=1",
                    origin_url,
                    f"+refs/heads/{branch}:refs/heads/{branch}",
                    timeout=NETWORK_TIMEOUT,
                )
            except GitError as exc:
                raise RepoError(f"cannot read {branch} from {REMOTE}: {exc}") from None
            yield cls(snap)
        finally:
            shutil.rmtree(holder, ignore_errors=True)

    def show(self, branch: str, path: str) -> str | None:
        return _show(self.git_dir, f"refs/heads/{branch}", path)


def remote_heads(cwd: Path, url: str, *, env: Mapping[str, str] | None = None) -> dict[str, str]:
    try:
        out = git(cwd, "ls-remote", "--heads", url, timeout=NETWORK_TIMEOUT, env=env).stdout
    except GitError as exc:
        raise RepoError(f"cannot read {REMOTE} ({url}): {exc}") from None
    heads: dict[str, str] = {}
    for line in out.splitlines():
        sha, _, ref = line.partition("\t")
        if ref.startswith("refs/heads/"):
            heads[ref.removeprefix("refs/heads/")] = sha
    return heads


def default_branch(cwd: Path, url: str) -> str | None:
    proc = git(cwd, "ls-remote", "--symref", url, "HEAD", timeout=NETWORK_TIMEOUT, check=False)
    m = _SYMREF.search(proc.stdout) if proc.returncode == 0 else None
    return m.group("branch") if m else None


def _show(cwd: Path, ref: str, path: str) -> str | None:
    proc = git(cwd, "show", f"{ref}:{path}", check=False)
    if proc.returncode != 0:
        return None
    return proc.stdout


def _absolute(url: str, base: Path) -> str:
    """A relative origin path is relative to the clone, not to our working directory."""
    if "://" in url or re.match(r"^[\w.-]+@[\w.-]+:", url) or url.startswith("/"):
        return url
    return str((base / url).resolve())
