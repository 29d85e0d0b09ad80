"""The delivery worker: claim, dispatch to handlers, finish under the lease.

A delivery's handler writes and its final status commit in one transaction,
fenced by the claim's lease, so a delivery is processed once even when a
worker dies mid-way and another reclaims it after the lease expires.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy.exc import OperationalError, StatementError

from app.logs import log_context
from app.metrics import DELIVERIES_HANDLED, DELIVERY_SECONDS
from app.service.outcome import HandlerContext, Ignore, TransientError
from app.service.retention import sweeper
from app.store import Delivery, LeaseLost, Store
from webhooks.payloads import PayloadError, parse_event_json
from webhooks.router import Router

log = logging.getLogger("odw.worker")

TRANSIENT = (TransientError, OperationalError, ConnectionError, TimeoutError)
MAX_ERROR_CHARS = 300


@dataclass(frozen=True)
class WorkerConfig:
    lease_seconds: float = 60.0
    max_attempts: int = 5
    retry_base_seconds: float = 2.0
    retry_max_seconds: float = 300.0
    poll_seconds: float = 0.2
    # Deliveries claimed per transaction; the claim was most of a worker's cost.
    claim_batch: int = 8
    # Finished deliveries older than this are pruned (ODW_RETENTION_DAYS).
    retention_seconds: float = 14 * 86_400.0


def new_owner(label: str = "worker") -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{label}:{uuid.uuid4().hex[:8]}"


def public_error(exc: BaseException) -> str:
    """The error as stored and shown by `/api/deliveries/<id>`: short, with no
    SQL and no bound parameters (payload data); the details go to the log."""
    if isinstance(exc, StatementError):
        cause = exc.orig if exc.orig is not None else exc
        return f"database error ({type(exc).__name__}: {type(cause).__name__}); details in the log"
    return _short(f"{type(exc).__name__}: {exc}")


def _short(text: str) -> str:
    first = text.splitlines()[0] if text else ""
    line = "".join(c if c.isprintable() else " " for c in first)
    return line if len(line) <= MAX_ERROR_CHARS else line[: MAX_ERROR_CHARS - 1] + "…"


class DeliveryWorker:
    def __init__(
        self,
        store: Store,
        router: Router,
        config: WorkerConfig,
        *,
        owner: str | None = None,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self.store = store
        self.router = router
        self.config = config
        self.owner = owner or new_owner()
        self.jitter = jitter
        self.held: deque[tuple[Delivery, float]] = deque()

    def process_one(self, stop: threading.Event | None = None) -> str | None:
        """Process one delivery; its final status, or None when idle.

        Claims up to `claim_batch` due deliveries at once (one transaction
        instead of one each) and works through them in order, renewing the
        lease of one that waited past half of it.
        """
        if not self.held:
            claimed = self.store.inbox.claim(
                self.owner, self.config.lease_seconds, limit=self.config.claim_batch
            )
            self.held.extend((d, time.monotonic()) for d in claimed)
            if not self.held:
                return None
        delivery, claimed_at = self.held.popleft()
        if stop is not None and stop.is_set():
            self.release_held(first=delivery)
            return None
        try:
            if time.monotonic() - claimed_at > self.config.lease_seconds / 2 and not (
                self.store.inbox.heartbeat(delivery.id, self.owner, self.config.lease_seconds)
            ):
                raise LeaseLost(delivery.id)
            with log_context(delivery=delivery.id):
                return self._process(delivery)
        except LeaseLost:
            log.warning(
                "lease lost; another worker has the delivery",
                extra={"delivery": delivery.id, "owner": self.owner},
            )
            return None

    def release_held(self, first: Delivery | None = None) -> None:
        """Hand back what was claimed but not started (graceful shutdown)."""
        pending = [first] if first is not None else []
        pending += [d for d, _ in self.held]
        self.held.clear()
        for d in pending:
            self.store.inbox.release(d.id, self.owner)

    def run(self, stop: threading.Event) -> None:
        """Process until `stop` is set; the delivery in hand is finished first."""
        while not stop.is_set():
            try:
                outcome = self.process_one(stop)
            except OperationalError as exc:
                log.error("database unavailable: %s", exc.orig or exc)
                stop.wait(min(5.0, self.config.poll_seconds * 10))
                continue
            if outcome is None and not self.held:
                stop.wait(self.config.poll_seconds)
        try:
            self.release_held()
        except OperationalError as exc:
            log.error("could not release claimed deliveries: %s", exc.orig or exc)

    def _process(self, delivery: Delivery) -> str:
        started = time.monotonic()
        handlers = self.router.handlers_for(delivery.event, delivery.action)
        if not handlers:
            action = f" action {delivery.action!r}" if delivery.action else ""
            return self._finish(delivery, "ignored", f"no handler for {delivery.event!r}{action}")
        try:
            event = parse_event_json(delivery.event, delivery.body)
        except PayloadError as exc:  # refused as sent: retrying cannot help
            return self._finish(delivery, "rejected", _short(str(exc)))
        except (ValueError, RecursionError) as exc:
            return self._finish(delivery, "failed", _short(str(exc)))
        try:
            with self.store.inbox.finishing(delivery.id, self.owner, "processed") as tx:
                ctx = HandlerContext(delivery.id, self.store, tx)
                for handler in handlers:
                    handler(event, ctx)
        except Ignore as exc:
            return self._finish(delivery, "ignored", exc.reason)
        except LeaseLost:
            raise
        except TRANSIENT as exc:
            log.warning("transient failure", exc_info=True)
            return self._retry(delivery, public_error(exc))
        except Exception as exc:
            log.exception("handler failed")
            return self._finish(delivery, "failed", public_error(exc))
        self._count(delivery, "processed")
        log.info(
            "processed %s%s",
            delivery.event,
            f".{delivery.action}" if delivery.action else "",
            extra={
                "ms": round((time.monotonic() - started) * 1000, 1),
            },
        )
        return "processed"

    def _finish(self, delivery: Delivery, status: str, reason: str) -> str:
        self.store.inbox.finish(delivery.id, self.owner, status, reason)  # type: ignore[arg-type]
        self._count(delivery, status)
        level = logging.WARNING if status in ("failed", "rejected") else logging.INFO
        log.log(level, "%s: %s", status, reason)
        return status

    def _count(self, delivery: Delivery, status: str) -> None:
        DELIVERIES_HANDLED.labels(event=delivery.event, outcome=status).inc()
        DELIVERY_SECONDS.observe(max(0.0, self.store.clock() - delivery.received_at))

    def _retry(self, delivery: Delivery, error: str) -> str:
        if delivery.attempts >= self.config.max_attempts:
            return self._finish(
                delivery, "failed", f"gave up after {delivery.attempts} attempts: {error}"
            )
        delay = min(
            self.config.retry_max_seconds,
            self.config.retry_base_seconds * 2 ** (delivery.attempts - 1),
        ) * (0.5 + self.jitter() / 2)
        self.store.inbox.retry_later(delivery.id, self.owner, error, self.store.clock() + delay)
        DELIVERIES_HANDLED.labels(event=delivery.event, outcome="retrying").inc()
        log.warning(
            "retrying in %.1fs: %s",
            delay,
            error,
            extra={"attempt": delivery.attempts},
        )
        return "retrying"


class WorkerPool:
    """Worker threads inside one process; `stop` lets each finish what it holds."""

    def __init__(self, store: Store, router: Router, config: WorkerConfig, threads: int) -> None:
        self.stop_event = threading.Event()
        self.workers = [
            DeliveryWorker(store, router, config, owner=new_owner(f"t{i}")) for i in range(threads)
        ]
        self.threads = [
            threading.Thread(
                target=w.run, args=(self.stop_event,), name=f"odw-worker-{i}", daemon=True
            )
            for i, w in enumerate(self.workers)
        ]
        self.threads.append(sweeper(store, config.retention_seconds, self.stop_event))

    def start(self) -> WorkerPool:
        for t in self.threads:
            t.start()
        return self

    def running(self) -> bool:
        """Every thread still runs (one that died takes its share of the work with it)."""
        return all(t.is_alive() for t in self.threads)

    def stop(self, timeout: float = 30.0) -> bool:
        """Signal and wait; True when every thread finished in time."""
        self.stop_event.set()
        deadline = time.monotonic() + timeout
        for t in self.threads:
            t.join(max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in self.threads)
