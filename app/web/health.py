"""`/healthz`: each part of the service, and 503 when a part that acts on
deliveries is down.

`database` and `intake` store a delivery before it is answered; `worker`
(a delivery worker's heartbeat in the database, `app.service.heartbeat`)
acts on it. `github` is what GitHub answered the App's JWT at start (`ok`,
`unreachable`, `not configured`): reported, never a reason for 503, since
deliveries are still stored and GitHub is asked again when they are acted on.
"""

from __future__ import annotations

from typing import Any

from app.store import Store
from app.store.heartbeats import STALE_SECONDS
from app.web.intake import Intake

OK, DOWN, UNREACHABLE = "ok", "down", "unreachable"


def health(
    db: Store, intake: Intake, *, worker_required: bool, github: str
) -> tuple[dict[str, Any], int]:
    """The JSON body and status of `/healthz`. The worker part decides the
    status only where this service runs delivery workers (`ODW_WORKERS` > 0);
    with none, workers run apart and are reported as found."""
    database = OK if db.ping() else UNREACHABLE
    parts = {
        "database": database,
        "intake": OK if intake.ready() else UNREACHABLE,
        "worker": _worker(db) if database == OK else "unknown",
        "github": github,
    }
    required = ["database", "intake", *(["worker"] if worker_required else [])]
    down = [p for p in required if parts[p] != OK]
    if down:
        return {"status": "unavailable", **parts, "down": down}, 503
    return {"status": "ok", **parts}, 200


def _worker(db: Store) -> str:
    try:
        return OK if db.heartbeats.live(within=STALE_SECONDS) else DOWN
    except Exception:  # the database went away between the two reads
        return "unknown"
