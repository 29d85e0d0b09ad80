"""The outbox executor: claim an entry, perform it, settle it or back off.

Each entry is claimed under a lease, renewed while it is performed (so a
slow effect is not claimed again by another executor), read as its kind's
typed effect and handed to that kind's performer (`performers/table.py`, built on first use).
A performer that raises is retried with exponential backoff; after
`MAX_ATTEMPTS` it is told it gave up (`Performer.gave_up`) so the run hears
why. A repository that moved, or an installation GitHub makes no token for
(uninstalled, suspended), is never retried: the entry is settled, the run (or
every open run of the installation) halted with the reason (`stops.py`), and
the performer told. `Busy` is not a failure: someone else holds what the entry
needs, so it is retried shortly, uncounted. Nor is `RetryLater`: GitHub asked
for a wait (a rate limit's reset can be an hour away) that would outlast the
entry's lease, after which another executor would take the same entry, so the
entry is put back due when the wait ends. An entry no performer can read (an unknown
kind, a payload no model takes) is settled dead at once with the reason logged.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Collection
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from app.apphost import stops
from app.apphost.performers.base import Busy, HostConfig, HostContext, Performer
from app.apphost.performers.table import PERFORMERS
from app.github import GitHubApp
from app.github.errors import InstallationUnavailable, RepositoryMoved, RetryLater
from app.logs import log_context
from app.metrics import EFFECTS
from app.renewal import renewing
from app.store import Store
from app.store.outbox import Effect as Entry

log = logging.getLogger("odw.apphost")

MAX_ATTEMPTS = 5
# The share of an entry's lease a GitHub wait inside it may take; the rest is
# the work's. A longer wait puts the entry back instead (`RetryLater`).
WAIT_SHARE = 0.5

__all__ = ["MAX_ATTEMPTS", "Executor", "HostConfig"]


class Unreadable(Exception):
    """An entry no performer can take: retrying cannot help."""


class Executor:
    def __init__(
        self,
        store: Store,
        github: GitHubApp,
        config: HostConfig,
        *,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.context = HostContext(store, github, config, clock)
        self.store = store
        self.wake = self.context.wake
        self._performers: dict[str, Performer[Any]] = {}
        self._building = threading.Lock()

    def run_once(self, limit: int = 1, kinds: Collection[str] | None = None) -> int:
        """Claim and perform up to `limit` due entries (of `kinds`, when given);
        how many were handled."""
        ctx = self.context
        entries = self.store.outbox.claim(ctx.owner, ctx.config.lease_seconds, limit, kinds=kinds)
        for entry in entries:
            self._handle(entry)
        return len(entries)

    def run(
        self, stop: threading.Event, poll: float = 0.2, kinds: Collection[str] | None = None
    ) -> None:
        while not stop.is_set():
            try:
                busy = self.run_once(kinds=kinds)
            except Exception:  # the database went away: log, wait, go on
                log.exception("outbox executor")
                busy = 0
            if not busy:
                self.wake.wait(poll)
                self.wake.clear()

    def _handle(self, entry: Entry) -> None:
        with log_context(effect=entry.key, run=entry.run_id, task=_task_of(entry)):
            self._perform(entry)

    def _perform(self, entry: Entry) -> None:
        try:
            performer, effect = self._read(entry)
        except Unreadable as exc:
            log.error("effect %s (%s) is settled unperformed: %s", entry.key, entry.kind, exc)
            self.store.outbox.fail(
                entry.key, self.context.owner, str(exc), attempt=entry.attempts, retry_at=None
            )
            _count(entry, "dead")
            return
        lease = self.context.config.lease_seconds
        owner = self.context.owner

        def extend() -> bool:
            return self.store.outbox.extend(
                entry.key, owner, attempt=entry.attempts, lease_seconds=lease
            )

        try:
            with (
                renewing(extend, lease / 3, f"effect {entry.key}"),
                self.context.github.context.waits_end_by(lease * WAIT_SHARE),
            ):
                result = performer.perform(effect, again=entry.attempts > 1)
        except RetryLater as later:
            log.warning("effect %s put back: %s", entry.key, later)
            retry_at = self.store.clock() + later.retry_after
            self.store.outbox.fail(
                entry.key, self.context.owner, str(later), attempt=entry.attempts, retry_at=retry_at
            )
            _count(entry, "put-back")
            return
        except Exception as exc:
            _count(entry, self._failed(entry, performer, effect, exc))
            return
        self.store.outbox.complete(entry.key, self.context.owner, result, attempt=entry.attempts)
        _count(entry, "done")

    def _read(self, entry: Entry) -> tuple[Performer[Any], Any]:
        row = PERFORMERS.get(entry.kind)
        if row is None:
            raise Unreadable(f"no performer does kind {entry.kind!r}")
        try:
            effect = row.model.model_validate(entry.payload)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'payload'}: {e['msg']}"
                for e in exc.errors()
            )
            raise Unreadable(f"its payload is not a {row.model.__name__}: {problems}") from None
        with self._building:
            performer = self._performers.get(entry.kind)
            if performer is None:
                performer = self._performers[entry.kind] = row.build(self.context)
        return performer, effect

    def _failed(self, entry: Entry, performer: Performer[Any], effect: Any, exc: Exception) -> str:
        """Settle a failed try; its outcome for `odw_effects_total`."""
        owner, error = self.context.owner, f"{type(exc).__name__}: {exc}"
        if isinstance(exc, Busy):  # not a failure: someone else is on it
            self.store.outbox.fail(
                entry.key, owner, error, attempt=entry.attempts, retry_at=self.store.clock() + 0.5
            )
            return "busy"
        if isinstance(exc, InstallationUnavailable):  # uninstalled or suspended on GitHub
            log.error("effect %s: %s", entry.key, error)
            self.store.outbox.fail(entry.key, owner, error, attempt=entry.attempts, retry_at=None)
            why = (
                f"{exc.reason}: ODW can do nothing for this run until the App is installed "
                "again (then `/odw run`) or unsuspended (then `/odw resume`)"
            )
            stops.installation_gone(self.store, exc.installation_id, why)
            performer.gave_up(effect, error)
            return "dead"
        if isinstance(exc, RepositoryMoved):  # no retry can undo a rename or a transfer
            log.error("effect %s: %s", entry.key, error)
            self.store.outbox.fail(entry.key, owner, error, attempt=entry.attempts, retry_at=None)
            if entry.run_id is not None:
                stops.repository_moved(self.store, entry.run_id, exc.moved_to, exc.reason)
            performer.gave_up(effect, error)
            return "dead"
        if entry.attempts < MAX_ATTEMPTS:
            delay = self.context.config.retry_base_seconds * 2 ** (entry.attempts - 1)
            log.warning("effect %s failed (attempt %d): %s", entry.key, entry.attempts, error)
            self.store.outbox.fail(
                entry.key, owner, error, attempt=entry.attempts, retry_at=self.store.clock() + delay
            )
            return "retry"
        log.error("effect %s gave up after %d attempts: %s", entry.key, entry.attempts, error)
        self.store.outbox.fail(entry.key, owner, error, attempt=entry.attempts, retry_at=None)
        performer.gave_up(effect, error)
        return "dead"


def _count(entry: Entry, outcome: str) -> None:
    EFFECTS.labels(kind=entry.kind, outcome=outcome).inc()


def _task_of(entry: Entry) -> str | None:
    """The task an entry is about, when its payload names one (a core effect's
    `effect.task`, an App effect's `task`); read before the payload is checked."""
    payload = entry.payload if isinstance(entry.payload, dict) else {}
    inner = payload.get("effect")
    task = (inner if isinstance(inner, dict) else payload).get("task")
    return task if isinstance(task, str) and task else None
