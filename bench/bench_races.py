"""Two processes racing to land on one repository (issue 30): 100 races through the
store's lease merge lock, each process with its own mirror, then an audit of the
bare origin: tasks landed twice, commits lost, and whether the two ever held the
lock at once. On PostgreSQL when one answers (`ODW_TEST_DATABASE_URL`, else the
local default), else on SQLite. The baseline beside it: one process landing the
same kind of task alone, one after another, in the same run. A second line
takes the merge lock away (a fifth of the races): what git's refusal of a
stale push and the landed check before each push keep on their own.

Set ODW_BENCH_RACES to change the number of races (default 100).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from bench.support import postgres_url
from tests.gitops.races import run_alone, run_races
from tests.store.databases import postgres_schema_url, sqlite_file_url


def main() -> None:
    races = int(os.environ.get("ODW_BENCH_RACES", "100"))
    few = max(1, races // 5)
    on_postgres = postgres_url() is not None
    with tempfile.TemporaryDirectory(prefix="odw-bench-races-") as tmp:
        root = Path(tmp)
        for part in ("races", "alone", "unlocked"):
            (root / part).mkdir()
        if on_postgres:
            with postgres_schema_url() as url:
                tally = run_races(url, root / "races", races)
            with postgres_schema_url() as url:
                alone = run_alone(url, root / "alone", 11)
            with postgres_schema_url() as url:
                unlocked = run_races(url, root / "unlocked", few, locked=False)
        else:
            tally = run_races(sqlite_file_url(root / "races"), root / "races", races)
            alone = run_alone(sqlite_file_url(root / "alone"), root / "alone", 11)
            url = sqlite_file_url(root / "unlocked")
            unlocked = run_races(url, root / "unlocked", few, locked=False)
    database = "PostgreSQL" if on_postgres else "SQLite (no PostgreSQL answers)"
    print(
        f"{tally.line()}; {tally.missing} tasks missing, {len(tally.failed)} failed reports, "
        f"{tally.overlaps} overlapping lock holds ({database}); "
        f"{tally.seconds / max(1, races):.2f} s per race of two landers "
        f"vs {alone:.2f} s per landing by one process alone"
    )
    print(
        f"without the merge lock, {unlocked.line().removeprefix('races: ')}; "
        f"{unlocked.missing} tasks missing, "
        f"{len(unlocked.failed)} failed reports, {unlocked.overlaps} overlapping landings"
    )
    for failure in (tally.failed + unlocked.failed)[:5]:
        print(f"  failed: {failure}")


if __name__ == "__main__":
    main()
