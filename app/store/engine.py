"""Engine construction: SQLite tuned for many writers, PostgreSQL via psycopg 3."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url

SQLITE_BUSY_TIMEOUT_MS = 30_000
WAL_AUTOCHECKPOINT_PAGES = 1000  # SQLite's default
READ_ONLY = {"odw_read_only": True}
# For transactions that only derive from input already stored durably (a
# worker's claim and its handler writes): losing the last of them to a power
# cut means the delivery is processed again, all or nothing, never lost.
REPEATABLE = {"odw_repeatable": True}
# For the writes a sender waits on to be answered (the intake's batches of
# deliveries, `app.web.intake`): on SQLite they go before every other writer
# (`Turnstile`) and never run a checkpoint on their commit (the intake's
# `Checkpointer` folds the WAL back when its writer is quiet).
ACKNOWLEDGING = {"odw_acknowledging": True}


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
    with (
        _gate(engine),
        engine.connect().execution_options(**options) as conn,
        conn.begin(),
    ):
        yield conn


@contextmanager
def write_transaction_on(conn: Connection) -> Iterator[Connection]:
    """The same, on a connection a writer keeps (no pool round trip)."""
    with _gate(conn.engine), conn.begin():
        yield conn


def _gate(engine: Engine) -> AbstractContextManager[object]:
    gate = _WRITE_GATES.get(engine)
    return gate if gate is not None else nullcontext()


def make_engine(url: str) -> Engine:
    url = normalise_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(url)
    if parsed.get_backend_name() == "postgresql":
        return _postgres_engine(url)
    raise ValueError(f"unsupported database URL {parsed.render_as_string(hide_password=True)}")


def _sqlite_engine(url: str) -> Engine:
    database = make_url(url).database or ""
    # A file path of ours; not in memory, nor a URI whose path is SQLite's to resolve.
    on_disk = database and database != ":memory:" and not database.startswith("file:")
    if on_disk:
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

    # Absolute from the start: one file for the engine's whole life.
    turnstile = Turnstile(f"{Path(database).resolve()}-turnstile" if on_disk else None)

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Any) -> None:
        # Writers take the write lock up front: a deferred transaction that
        # reads then writes fails at once under WAL instead of waiting.
        options = conn.get_execution_options()
        if options.get("odw_read_only"):
            conn.exec_driver_sql("BEGIN")
            return
        dbapi_conn = conn.connection.dbapi_connection
        acknowledging = options.get("odw_acknowledging")
        repeatable = options.get("odw_repeatable") and not acknowledging
        # FULL syncs the WAL at every commit: what was acknowledged survives a
        # power cut. Repeatable work skips that wait (see REPEATABLE).
        dbapi_conn.execute(f"PRAGMA synchronous={'NORMAL' if repeatable else 'FULL'}")
        # Set on every begin: a pooled connection serves both kinds in turn.
        pages = 0 if acknowledging else WAL_AUTOCHECKPOINT_PAGES
        dbapi_conn.execute(f"PRAGMA wal_autocheckpoint={pages}")
        if acknowledging:
            with turnstile.first():
                _begin_promptly(dbapi_conn)
            return
        turnstile.pass_through()
        if repeatable:
            dbapi_conn.execute("BEGIN IMMEDIATE")
        else:
            _begin_promptly(dbapi_conn)

    return engine


class Turnstile:
    """Acknowledging writes first, across the processes sharing one SQLite file.

    SQLite's write lock is not fair: a delivery worker committing back to
    back kept the intake waiting up to 50 ms for it while HTTP requests
    waited on the intake. An acknowledging writer holds this file lock
    exclusively while it waits for the write lock; every other writer passes
    through it (shared, released at once) before asking, so none starts
    ahead of a waiting acknowledgement. Without a path it does nothing.
    """

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._pid = -1
        self._fds: tuple[int, int] = (-1, -1)

    def _files(self) -> tuple[int, int]:
        with self._lock:
            if self._pid != os.getpid() and self.path is not None:
                # Descriptors of its own per process (and two: flock owners are
                # open files, so the exclusive and the shared side must differ);
                # a forked child's inherited ones would share the parent's lock.
                for fd in self._fds:
                    if fd >= 0:
                        with suppress(OSError):
                            os.close(fd)
                flags = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC
                self._fds = (os.open(self.path, flags, 0o600), os.open(self.path, flags, 0o600))
                self._pid = os.getpid()
            return self._fds

    @contextmanager
    def first(self) -> Iterator[None]:
        """Held while an acknowledging writer waits for the write lock."""
        if self.path is None:
            yield
            return
        fd = self._files()[0]
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def pass_through(self) -> None:
        """Wait while an acknowledging writer is waiting or beginning."""
        if self.path is None:
            return
        fd = self._files()[1]
        fcntl.flock(fd, fcntl.LOCK_SH)
        fcntl.flock(fd, fcntl.LOCK_UN)


def _begin_promptly(dbapi_conn: Any) -> None:
    """BEGIN IMMEDIATE, polling for the write lock every 2 ms at most.

    Another process (the delivery worker) may hold the lock for a moment.
    SQLite's busy handler would back off in sleeps of up to 100 ms; a write
    someone is waiting on to be acknowledged polls finely instead.
    """
    dbapi_conn.execute("PRAGMA busy_timeout=0")
    try:
        deadline = time.monotonic() + SQLITE_BUSY_TIMEOUT_MS / 1000
        pause = 0.0001
        while True:
            try:
                dbapi_conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.002)
    finally:
        dbapi_conn.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")


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
