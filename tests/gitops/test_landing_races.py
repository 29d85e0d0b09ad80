"""Two landing processes racing on one repository through the store's lease merge
lock, on SQLite and PostgreSQL: no task lands twice, no commit on the base is lost
(issue 30; `python -m bench races` runs 100 of these)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitops.races import audit, head, make_origin, run_races
from tests.store.databases import database_url
from tests.support import git

RACES = 4  # two races of two tasks, two of one task sent to both


@pytest.mark.parametrize("kind", ["sqlite", "postgres"], ids=["sqlite", "postgres"])
def test_two_processes_racing_land_every_task_once_and_lose_nothing(
    kind: str, tmp_path: Path
) -> None:
    with database_url(kind, tmp_path) as url:
        tally = run_races(url, tmp_path, RACES)
    assert tally.failed == []
    assert tally.overlaps == 0  # the merge lock held across the two processes
    assert (tally.double_landings, tally.lost_commits, tally.missing) == (0, 0, 0)
    assert tally.line() == f"races: {RACES} races, 0 double landings, 0 lost commits"


def test_the_audit_sees_a_double_landing_and_a_lost_commit(tmp_path: Path) -> None:
    """What the race test relies on: a task squashed twice and a base rewound are counted."""
    tasks = ["1.1.1", "1.1.2"]
    origin = make_origin(tmp_path, tasks)
    work = tmp_path / "work"
    git(None, "clone", "--quiet", str(origin), str(work))
    seed = head(origin)
    for message in ("first", "again"):
        git(work, "commit", "--quiet", "--allow-empty", "-m", f"{message}\n\nODW-Task: 1.1.1")
    git(work, "push", "--quiet", "origin", "HEAD:main")
    twice = head(origin)
    assert audit(origin, tasks, [seed, twice]) == (1, 0)
    git(work, "push", "--quiet", "--force", "origin", f"{seed}:main")  # twice is gone
    assert audit(origin, tasks, [seed, twice]) == (0, 1)
