"""Many ODW processes on PostgreSQL under SIGKILL chaos, beside one process.

Two `odw serve` and three `odw worker` processes share one PostgreSQL schema
while 20 repositories run 5-task roadmaps on the fake GitHub and a chaos loop
SIGKILLs a random process every few seconds and starts it again. The audit
reads GitHub's side: every task landed once, no effect performed twice, no
delivery lost. A single `odw serve` on a smaller size, without chaos, runs in
the same invocation for the figures printed beside.

Needs ODW_TEST_DATABASE_URL (as the PostgreSQL tests do). ODW_SOAK_REPOS,
ODW_SOAK_TASKS and ODW_SOAK_BOUND (seconds) shrink or bound it; the run never
waits past the bound, it reports what did not land instead.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from tests.soak.run import Outcome, Size, soak
from tests.store.databases import PG_ENV, postgres_base_url, postgres_schema_url


def _size() -> Size:
    return Size(
        serves=2,
        workers=3,
        repos=int(os.environ.get("ODW_SOAK_REPOS", "20")),
        tasks=int(os.environ.get("ODW_SOAK_TASKS", "5")),
        kill_every=4.0,
        bound=float(os.environ.get("ODW_SOAK_BOUND", "900")),
    )


def _run(size: Size, name: str) -> Outcome:
    with (
        tempfile.TemporaryDirectory(prefix=f"odw-soak-{name}-") as tmp,
        postgres_schema_url() as url,
    ):
        return soak(Path(tmp), url, size)


def main() -> None:
    if postgres_base_url() is None:
        print(f"soak: not run, {PG_ENV} is unset (a PostgreSQL server's URL)")
        return
    size = _size()
    single = Size(
        serves=1, workers=0, repos=max(1, size.repos // 5), tasks=size.tasks, kill_every=None
    )
    base = _run(single, "single")
    print(f"single process ({single.repos} repos x {single.tasks} tasks): {base.figures.line()}")
    out = _run(size, "cluster")
    print(
        f"{size.serves} serve + {size.workers} worker ({size.repos} repos x {size.tasks} tasks, "
        f"a kill every ~{size.kill_every:g} s): {out.figures.line()}"
    )
    for note in out.notes:
        print(f"  note: {note}")
    a = out.audit
    for problem in a.missing[:10] + a.landed_twice[:10] + a.effects_twice[:10] + a.lost[:10]:
        print(f"  {problem}")
    print(
        f"soak: {out.summary()}; cluster {out.figures.line()} "
        f"beside single process {base.figures.line()}",
        flush=True,
    )
