"""The delivery workers' heartbeat: how `/healthz` knows deliveries are acted on.

Each `odw worker` process renews a lease named for it while all its threads
run; a worker that died, hung or lost a thread stops renewing, and once the
lease expires `/healthz` reports the worker part down. The lease lives in the
database every process shares, so a worker run apart from `odw serve` counts
too.
"""

from __future__ import annotations

import os

from app.liveness import HOST
from app.store.store import Store

PREFIX = "heartbeat:worker:"
# Renewed this often; stale (the worker down) after STALE_SECONDS without renewal.
BEAT_SECONDS = 1.0
STALE_SECONDS = 5.0


def name() -> str:
    return f"{PREFIX}{HOST}:{os.getpid()}"


def beat(store: Store) -> None:
    store.leases.acquire(name(), name(), STALE_SECONDS)


def stop(store: Store) -> None:
    store.leases.release(name(), name())


def workers_alive(store: Store) -> int:
    return store.leases.live_count(PREFIX)


def forget_gone(store: Store) -> int:
    """Drop the expired heartbeats of workers that are gone."""
    return store.leases.drop_expired(PREFIX)
