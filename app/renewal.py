"""Keeping a claim or a lease while the work under it runs.

A lease's time is a guess at how long the work takes; a GitHub wait or a slow
push can outlast it, and then another process takes the same work. `renewing`
renews from a thread of its own every `every` seconds while the work runs and
sets the event it yields once a renewal is refused (someone else has the work
now). What the work writes is fenced on its own; the event only lets it stop
early instead of finding out at its next write.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

log = logging.getLogger("odw.renewal")


@contextmanager
def renewing(renew: Callable[[], bool], every: float, what: str) -> Iterator[threading.Event]:
    lost = threading.Event()
    done = threading.Event()

    def beat() -> None:
        while not done.wait(every):
            try:
                kept = renew()
            except Exception as exc:  # the database went away: the next beat tries again
                log.warning("could not renew %s: %s", what, exc)
                continue
            if not kept:
                log.warning("%s was taken over; its work stops at its next write", what)
                lost.set()
                return

    thread = threading.Thread(target=beat, name=f"renew {what}", daemon=True)
    thread.start()
    try:
        yield lost
    finally:
        done.set()
        thread.join()
