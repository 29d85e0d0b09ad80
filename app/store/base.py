"""Plumbing shared by the store's parts: transactions, dialect inserts, JSON."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from sqlalchemy import Connection, Engine, Table
from sqlalchemy.dialects import postgresql, sqlite

from app.store.engine import READ_ONLY, write_transaction

Clock = Callable[[], float]


class StoreError(Exception):
    """Base class for errors the store raises on purpose."""


class LeaseLost(Exception):
    """What was held (a delivery's claim, a lease's hold) is another holder's
    now: the work done under it must not commit."""


class Part:
    """One area of the store; every method runs in the caller's transaction when
    given `tx`, or in a transaction of its own otherwise."""

    def __init__(self, engine: Engine, clock: Clock = time.time) -> None:
        self.engine = engine
        self.clock = clock

    @contextmanager
    def _tx(self, tx: Connection | None) -> Iterator[Connection]:
        if tx is not None:
            yield tx
            return
        with write_transaction(self.engine) as conn:
            yield conn

    def _write(self, **options: object) -> AbstractContextManager[Connection]:
        return write_transaction(self.engine, **options)

    @contextmanager
    def _read(self, tx: Connection | None) -> Iterator[Connection]:
        if tx is not None:
            yield tx
            return
        with self.engine.connect().execution_options(**READ_ONLY) as conn, conn.begin():
            yield conn

    def _insert(self, table: Table) -> Any:
        """A dialect insert, so callers can use ON CONFLICT on both backends."""
        if self.engine.dialect.name == "postgresql":
            return postgresql.insert(table)
        return sqlite.insert(table)

    @property
    def is_postgres(self) -> bool:
        return self.engine.dialect.name == "postgresql"


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)
