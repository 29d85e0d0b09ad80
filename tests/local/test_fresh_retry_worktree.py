"""Local mode's side of a retry's fresh start: the first write attempt after a
retry keeps the remote branch's work aside and starts from the base."""

from __future__ import annotations

import subprocess
from pathlib import Path

from app.local.stage_runner import _add_worktree
from tests.gitops.origins import Origin

KEEP = "odw-kept/roadmap-1-1-1/retry-1"


def test_a_fresh_attempt_starts_from_the_base_and_keeps_the_old_work(
    tmp_path: Path,
) -> None:
    origin = Origin.create(tmp_path / "remote", ["1.1.1"])
    branch = origin.task_branch("1.1.1")
    before = origin.heads()
    clone = origin.clone()
    start = _add_worktree(
        clone, tmp_path / "wt", remote="origin", base="main", branch=branch, fresh=KEEP
    )
    after = origin.heads()
    assert start == "refs/remotes/origin/main"
    assert after[KEEP] == before[branch] and branch not in after
    head = subprocess.run(
        ["git", "-C", str(tmp_path / "wt"), "rev-parse", "HEAD"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    assert head == after["main"]
