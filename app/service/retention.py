"""The retention sweep beside the delivery workers: prune once at start, then
every `every` seconds, until stopped. Errors are logged, never fatal."""

from __future__ import annotations

import logging
import threading

from app.store import Store

log = logging.getLogger("odw.retention")

PRUNE_EVERY = 3600.0


def sweep(store: Store, max_age_seconds: float) -> None:
    try:
        pruned = store.retention.prune(max_age_seconds)
    except Exception as exc:  # the next sweep tries again
        log.warning("retention sweep failed: %s", type(exc).__name__)
        return
    if pruned.deliveries or pruned.recorded_events or pruned.outbox:
        log.info(
            "pruned %d deliveries, %d recorded events and %d done outbox entries "
            "older than %.1f days",
            pruned.deliveries,
            pruned.recorded_events,
            pruned.outbox,
            max_age_seconds / 86_400,
        )


def sweeper(
    store: Store, max_age_seconds: float, stop: threading.Event, every: float = PRUNE_EVERY
) -> threading.Thread:
    def loop() -> None:
        while True:
            sweep(store, max_age_seconds)
            if stop.wait(every):
                return

    return threading.Thread(target=loop, name="odw-retention", daemon=True)
