"""The store: one object opened from a database URL, holding every part."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Connection, text
from sqlalchemy.engine import make_url

from app.liveness import process_alive
from app.store import migrate
from app.store.activity import Activity
from app.store.base import Clock
from app.store.engine import make_engine, normalise_url, write_transaction
from app.store.event_log import EventLog
from app.store.heartbeats import Heartbeats
from app.store.inbox import Inbox
from app.store.installations import Installations
from app.store.leases import Leases, Liveness
from app.store.outbox import Outbox
from app.store.projections import Projections
from app.store.retention import Retention


class SchemaOutOfDate(Exception):
    """The database has not been migrated to this version of odw."""


def sqlite_url(path: str | Path) -> str:
    return f"sqlite:///{Path(path)}"


class Store:
    def __init__(
        self, url: str, *, clock: Clock = time.time, alive: Liveness = process_alive
    ) -> None:
        self.url = normalise_url(url)
        self.engine = make_engine(self.url)
        self.clock = clock
        self.events = EventLog(self.engine, clock)
        self.inbox = Inbox(self.engine, clock)
        self.outbox = Outbox(self.engine, clock)
        self.leases = Leases(self.engine, clock, alive)
        self.projections = Projections(self.engine, clock)
        self.installations = Installations(self.engine, clock)
        self.activity = Activity(self.engine, clock)
        self.retention = Retention(self.engine, clock)
        self.heartbeats = Heartbeats(self.engine, clock)

    @classmethod
    def open(
        cls,
        url: str,
        *,
        migrate_schema: bool = True,
        clock: Clock = time.time,
        alive: Liveness = process_alive,
    ) -> Store:
        """Open the database at `url`; with `migrate_schema` (the default) the
        schema is created or upgraded first, otherwise it must be current."""
        store = cls(url, clock=clock, alive=alive)
        if migrate_schema:
            store.upgrade()
        else:
            store.check_schema()
        return store

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def describe(self) -> str:
        """The URL without its password, for messages."""
        return make_url(self.url).render_as_string(hide_password=True)

    def upgrade(self) -> None:
        migrate.upgrade(self.engine)

    def check_schema(self) -> None:
        current, head = migrate.current_revision(self.engine), migrate.head_revision()
        if current != head:
            raise SchemaOutOfDate(
                f"database schema is at {current or 'nothing'}, odw needs {head}: "
                "run `odw db upgrade`"
            )

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One transaction to pass as `tx=` to several parts (all or nothing)."""
        with write_transaction(self.engine) as conn:
            yield conn

    def ping(self) -> bool:
        try:
            with self.engine.connect() as conn:
                conn.execute(text("SELECT 1"))
        except Exception:
            return False
        return True

    def close(self) -> None:
        self.engine.dispose()
