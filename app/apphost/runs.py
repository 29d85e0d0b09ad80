"""Runs of the App: keyed by installation, repository and base; one open run per key.

A run's identity and what it was started from (the pinned base SHA, the
repository's settings) live in its projection's data; the event log is the
core's. `find_open` is how every input finds the run it belongs to;
`live_attempts` is how a completed workflow run finds the attempts it may be.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection

from app.apphost.snapshots import index_unsnapshotted
from app.store import Store
from app.store.projections import LiveAttemptRow

OPEN = "running"
FINISHED = "finished"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class RunKey:
    installation: int
    repository: str  # OWNER/NAME
    base: str

    def label(self) -> str:
        return f"{self.repository}@{self.base}"

    def to_json(self) -> dict[str, Any]:
        return {"installation": self.installation, "repository": self.repository, "base": self.base}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunKey:
        return cls(int(data["installation"]), str(data["repository"]), str(data["base"]))


def new_run_id(key: RunKey, now: datetime | None = None) -> str:
    """`gh-<owner>-<name>-<base>-<UTC stamp>-<random>`: readable in logs, unique."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    owner_name = _UNSAFE.sub("-", key.repository.replace("/", "-"))
    return f"gh-{owner_name}-{_UNSAFE.sub('-', key.base)}-{stamp}-{secrets.token_hex(3)}"


def run_lease(run_id: str) -> str:
    """The lease of a run's GitHub side: its view syncs and reconciler passes
    run under it, one executor of one process at a time, renewed while they
    run; a dead holder's run is taken over once the lease runs out (at once
    when the holder was a process of this host that is gone)."""
    return f"app-run:{run_id}"


def find_open(store: Store, key: RunKey, *, tx: Connection | None = None) -> str | None:
    """The open run of `key`, if any (there is at most one)."""
    for view in store.projections.runs(status=OPEN):
        if view.data.get("key") == key.to_json():
            return view.run_id
    return None


def run_meta(store: Store, run_id: str, *, tx: Connection | None = None) -> dict[str, Any]:
    view = store.projections.run(run_id, tx=tx)
    return dict(view.data) if view is not None else {}


def open_runs(store: Store) -> list[str]:
    return [v.run_id for v in store.projections.runs(status=OPEN) if "key" in v.data]


def live_attempts(store: Store, installation: int, repository: str) -> list[LiveAttemptRow]:
    """The live attempts of the repository's open runs: one indexed read, no fold
    (a run saved before the index existed is folded and indexed first, once)."""
    index_unsnapshotted(store, OPEN)
    return store.projections.attempts(installation, repository)
