"""After landing, the task branch is deleted on origin unless the caller keeps it."""

from __future__ import annotations

from pathlib import Path

from app.gitops import InProcessMergeLock, integrate
from tests.gitops.origins import Origin


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
