"""Is another process running this base right now? Read its lease, never take it.

A dry run must see a live run: its task branches are work in progress, not
survivors of a failed run, and a real run started now would be refused. The
store is opened read-only so a dry run writes nothing.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from app.liveness import process_alive

STORE_FILE = "local.sqlite3"


@dataclass(frozen=True)
class LiveRun:
    run_id: str | None
    host: str
    pid: int
    tasks: tuple[str, ...]  # tasks with an attempt in flight

    def describe(self, base: str) -> str:
        run = f"run {self.run_id}" if self.run_id else "a run"
        return f"{run} (pid {self.pid} on {self.host}) is running base {base} now"


def live_run(state_dir: Path, base: str, *, now: float | None = None) -> LiveRun | None:
    """The live owner of `local-base:<base>`, or None when nobody holds it."""
    db = state_dir / STORE_FILE
    if not db.is_file():
        return None
    # With no write-ahead log beside it nobody has the store open and all of it
    # is in the file: read it as immutable, which creates no -wal/-shm files.
    wal = db.with_name(db.name + "-wal").exists()
    try:
        con = sqlite3.connect(
            f"file:{db}?mode=ro" + ("" if wal else "&immutable=1"), uri=True, timeout=5
        )
    except sqlite3.Error:
        return None
    try:
        rows = con.execute(
            "SELECT name, owner, host, pid, expires_at FROM leases "
            "WHERE name = ? OR name LIKE 'run:%'",
            (f"local-base:{base}",),
        ).fetchall()
    except sqlite3.Error:
        return None
    finally:
        con.close()
    held = next((r for r in rows if r[0] == f"local-base:{base}"), None)
    if held is None:
        return None
    _, owner, host, pid, expires_at = held
    clock = time.time() if now is None else now
    if expires_at < clock and not process_alive(host, pid):
        return None
    run_id = next(
        (r[0][len("run:") :] for r in rows if r[0].startswith("run:") and r[1] == owner), None
    )
    return LiveRun(run_id, host, pid, _in_flight(state_dir, run_id))


def _in_flight(state_dir: Path, run_id: str | None) -> tuple[str, ...]:
    if run_id is None:
        return ()
    tasks: set[str] = set()
    for path in sorted((state_dir / "runs" / run_id / "attempts").glob("*.json")):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            task = json.loads(path.read_text("utf-8")).get("task")
            if isinstance(task, str):
                tasks.add(task)
    return tuple(sorted(tasks))
