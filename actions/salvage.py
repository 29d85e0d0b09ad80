"""Collect a failed write stage's dirty ExecPlans into the verdict's artifact.

Only regular `.md` files directly in `docs/execplans/` inside the worktree
qualify (the contract's `docs/execplans/*.md`). Symlinks (of the file or any
folder above it), hard links (a second name for a file elsewhere), nested
folders, absolute paths, `..` parts and anything resolving outside the worktree
are rejected by name, before a byte is copied. Whether the bundle is committed
is decided later, by the assessment.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from app.core.naming import EXECPLAN_DIR
from app.core.verdict import RejectedPath, SalvageBundle

MAX_FILE_BYTES = 1 << 20
_PREFIX = EXECPLAN_DIR + "/"
NESTED = f"in a nested folder (only {EXECPLAN_DIR}/*.md)"


def _hard_link(links: int) -> str:
    return f"has more than one hard link ({links})"


def _reason(worktree: Path, rel: str) -> str | None:
    """Why `rel` may not be salvaged, or None when it is a safe regular file."""
    if not rel or "\0" in rel:
        return "empty or invalid path"
    pure = PurePosixPath(rel)
    if pure.is_absolute() or rel.startswith("/"):
        return "absolute path"
    if ".." in pure.parts:
        return "path has a '..' component"
    if not rel.startswith(_PREFIX):
        return f"outside {EXECPLAN_DIR}/"
    if pure.parent != PurePosixPath(EXECPLAN_DIR):
        return NESTED
    current = worktree
    for part in pure.parts:
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except OSError:
            return "missing"
        if stat.S_ISLNK(mode):
            return "symlink" if current == worktree / rel else f"inside a symlinked folder ({part})"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    links = os.lstat(current).st_nlink
    if links > 1:
        return _hard_link(links)
    if not rel.endswith(".md"):
        return "not a Markdown (.md) file"
    root = worktree.resolve()
    target = (worktree / rel).resolve()
    if not target.is_relative_to(root / EXECPLAN_DIR):
        return "resolves outside the worktree's docs/execplans/"
    return None


def _copy(src: Path, dest: Path) -> str | None:
    """Copy without following a symlink swapped in after the check."""
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        return f"cannot open: {exc.strerror}"
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        if info.st_nlink > 1:  # linked after the check
            return _hard_link(info.st_nlink)
        if info.st_size > MAX_FILE_BYTES:
            return f"larger than {MAX_FILE_BYTES} bytes"
        data = fh.read(MAX_FILE_BYTES + 1)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(data)
    return None


def candidates(dirty: Iterable[tuple[str, bool]]) -> list[str]:
    """Dirty paths (path, deleted) that claim to be ExecPlan artefacts."""
    out = []
    for path, deleted in dirty:
        if deleted:
            continue
        if path.startswith(_PREFIX) or f"/{EXECPLAN_DIR}/" in path or ".." in path:
            out.append(path)
    return sorted(set(out))


def collect(worktree: Path, paths: Iterable[str], bundle_dir: Path) -> SalvageBundle:
    """Copy the safe files among `paths` to `bundle_dir/<path>`; name every rejection."""
    files: list[str] = []
    rejected: list[RejectedPath] = []
    for rel in sorted(set(paths)):
        reason = _reason(worktree, rel)
        if reason is None:
            reason = _copy(worktree / rel, bundle_dir / rel)
        if reason is None:
            files.append(rel)
        else:
            rejected.append(RejectedPath(path=rel, reason=reason))
    return SalvageBundle(files=files, rejected=rejected)
