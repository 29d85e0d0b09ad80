"""Engine construction: SQLite tuned for many writers, PostgreSQL via psycopg 3."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url

SQLITE_BUSY_TIMEOUT_MS = 30_000
READ_ONLY = {"odw_read_only": True}
# For transactions that only derive from input already stored durably (a
# worker's claim and its handler writes): losing the last of them to a power
# cut means the delivery is processed again, all or nothing, never lost.
REPEATABLE = {"odw_repeatable": True}


def normalise_url(url: str) -> str:
    """Accept `postgresql://` and `postgres://` as psycopg 3 URLs."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


_WRITE_GATES: weakref.WeakKeyDictionary[Engine, threading.RLock] = weakref.WeakKeyDictionary()


@contextmanager
def write_transaction(engine: Engine, **options: object) -> Iterator[Connection]:
    """A write transaction. On SQLite the writers of one process queue on a
    lock first: SQLite's own busy handler polls with sleeps of up to 100 ms,
    which turns contention between threads into long tail latency."""
    gate = _WRITE_GATES.get(engine)
    with (
        gate if gate is not None else nullcontext(),
        engine.connect().execution_options(**options) as conn,
        conn.begin(),
    ):
        yield conn


def make_engine(url: str) -> Engine:
    url = normalise_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(url)
    if parsed.get_backend_name() == "postgresql":
        return _postgres_engine(url)
    raise ValueError(f"unsupported database URL {parsed.render_as_string(hide_password=True)}")


def _sqlite_engine(url: str) -> Engine:
    parsed = make_url(url)
    database = parsed.database or ""
    if database and database != ":memory:" and not database.startswith("file:"):
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(
        url,
        connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
        # Enough for the HTTP threads and the worker threads of one process, so
        # connections (and their pragmas) are reused rather than reopened.
        pool_size=20,
        max_overflow=20,
    )

    _WRITE_GATES[engine] = threading.RLock()

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Take transaction control away from pysqlite so BEGIN below is ours.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA foreign_keys=ON")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # Writers take the write lock up front: a deferred transaction that
        # reads then writes fails at once under WAL instead of waiting.
        options = conn.get_execution_options()
        if options.get("odw_read_only"):
            conn.exec_driver_sql("BEGIN")
            return
        # FULL syncs the WAL at every commit: what was acknowledged survives a
        # power cut. Repeatable work skips that wait (see REPEATABLE).
        sync = "NORMAL" if options.get("odw_repeatable") else "FULL"
        conn.exec_driver_sql(f"PRAGMA synchronous={sync}")
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _postgres_engine(url: str) -> Engine:
    engine = create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=10)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # An acknowledged delivery is on disk when its commit returns, whatever
        # the server's default: the WAL is flushed (and, with synchronous
        # standbys, confirmed) before COMMIT answers.
        with dbapi_conn.cursor() as cur:
            cur.execute("SET synchronous_commit = on")
        dbapi_conn.commit()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # Repeatable work (see REPEATABLE) does not wait for the flush: the
        # same trade as SQLite's synchronous=NORMAL, all or nothing.
        if conn.get_execution_options().get("odw_repeatable"):
            conn.exec_driver_sql("SET LOCAL synchronous_commit = off")

    return engine


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"
