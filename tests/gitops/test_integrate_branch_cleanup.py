"""After landing, the task branch is deleted on origin unless the caller keeps it."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.gitops import InProcessMergeLock, integrate
from tests.gitops.conftest import GitSpy
from tests.gitops.origins import Origin
from tests.support import git


def _land(origin: Origin, data_dir: Path, task_id: str, **kw: object):
    branch = "roadmap-" + task_id.replace(".", "-")
    return integrate(
        str(origin.path), origin.base, branch, task_id, run_id="r",
        lock=InProcessMergeLock(), data_dir=data_dir, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def test_keep_branch_leaves_it_and_the_next_landing_reuses_the_worktree(
    origin: Origin, data_dir: Path
) -> None:
    kept = origin.task_branch("1.1.1")
    tip = origin.head(kept)
    first = _land(origin, data_dir, "1.1.1", delete_branch=False)
    assert first.complete and origin.head(kept) == tip
    assert "deleted" not in (first.summary or "")

    gone = origin.task_branch("1.1.2")
    second = _land(origin, data_dir, "1.1.2")
    assert second.complete
    assert f"refs/heads/{gone}" not in origin.refs()
    assert len(list((data_dir / "worktrees").glob("*/kept-*"))) == 1


def test_a_landing_is_seven_git_calls_with_the_branch_kept(
    origin: Origin, data_dir: Path, spy: GitSpy, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No extra fetch, landed check, worktree set-up or removal per landing (issue 12);
    the landed check's two reads (`log`, `show`) run at once, so in either order."""
    for tid in ("1.1.1", "1.1.2"):
        origin.task_branch(tid)
    assert _land(origin, data_dir, "1.1.1", delete_branch=False).complete  # makes the mirror
    monkeypatch.setenv("PATH", spy.env()["PATH"])
    assert _land(origin, data_dir, "1.1.2", delete_branch=False).complete
    calls = spy.subcommands()
    assert calls[0] == "fetch" and sorted(calls[1:3]) == ["log", "show"]
    assert calls[3:] == ["rebase", "commit", "commit-tree", "push"]


def test_a_worktree_left_dirty_by_a_killed_landing_is_reset_before_the_next(
    origin: Origin, data_dir: Path
) -> None:
    origin.task_branch("1.1.1")
    origin.task_branch("1.1.2")
    assert _land(origin, data_dir, "1.1.1", delete_branch=False).complete
    (kept,) = (data_dir / "worktrees").glob("*/kept-*")
    (kept / "README.md").write_text("half-written by a landing that was killed\n")
    (kept / "docs" / "roadmap.md").write_text("staged, never committed\n")
    git(kept, "add", "docs/roadmap.md")

    report = _land(origin, data_dir, "1.1.2", delete_branch=False)

    assert report.complete, report.summary
    assert git(origin.path, "show", f"{report.sha}:README.md") == "demo\n"
    assert "- [x] 1.1.2. " in origin.roadmap() and "- [x] 1.1.1. " in origin.roadmap()
