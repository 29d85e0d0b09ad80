"""A retry's fresh start on origin: the earlier work kept aside, the task branch
one empty commit on top of the base's tip (never equal to the base, or GitHub
would close its pull request), and a second call changes nothing."""

from __future__ import annotations

import subprocess

from app.gitops.evidence.repo import LocalRepo
from app.gitops.start_over import start_over
from tests.gitops.origins import Origin

KEEP = "odw-kept/roadmap-1-1-1/retry-1"


def rev(origin: Origin, spec: str) -> str:
    return subprocess.run(
        ["git", "-C", str(origin.path), "rev-parse", spec],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def test_the_work_is_kept_and_the_branch_starts_again_from_the_base_tip(origin: Origin) -> None:
    branch = origin.task_branch("1.1.1")
    before = origin.heads()
    repo = LocalRepo.open(origin.clone())
    fresh = start_over(repo, base="main", branch=branch, keep=KEEP)
    after = origin.heads()
    assert after[KEEP] == before[branch]
    assert fresh is not None and after[branch] == fresh != after["main"]
    assert rev(origin, f"{fresh}^") == after["main"]  # one commit on the base's tip
    assert rev(origin, f"{fresh}^{{tree}}") == rev(origin, "main^{tree}")  # and it is empty
    assert start_over(repo, base="main", branch=branch, keep=KEEP) is None
    assert origin.heads() == after


def test_a_branch_that_is_not_on_origin_is_left_to_be_created(origin: Origin) -> None:
    repo = LocalRepo.open(origin.clone())
    assert start_over(repo, base="main", branch="roadmap-9-9", keep=KEEP) is None
    assert KEEP not in origin.heads()
