"""On SQLite the writes that answer webhook senders come first: no other
writer, in any process, starts while one waits for the write lock, and their
commits never stop to fold the WAL back (that waits for a quiet moment)."""

from __future__ import annotations

import fcntl
import os
import sqlite3
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import text

from app.store import Store
from app.store.engine import (
    ACKNOWLEDGING,
    READ_ONLY,
    Turnstile,
    write_transaction,
)
from app.store.inbox import NewDelivery
from app.web.intake.batch_writer import BatchWriter

BIG = 64 * 1024


def wait_for(pred: Callable[[], bool], timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


@pytest.fixture
def db(tmp_path: Path) -> Iterator[tuple[Store, Path]]:
    path = tmp_path / "odw.sqlite3"
    store = Store.open(f"sqlite:///{path}")
    yield store, path
    store.engine.dispose()


def turnstile_held(path: Path) -> bool:
    """Whether an acknowledging writer is waiting (probed from outside)."""
    fd = os.open(f"{path}-turnstile", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def other_process_write(path: Path) -> subprocess.Popen[bytes]:
    """A delivery worker's kind of write, from a process of its own."""
    script = (
        "import sys\n"
        "from app.store import Store\n"
        "from app.store.engine import REPEATABLE, write_transaction\n"
        "from sqlalchemy import text\n"
        "store = Store.open(sys.argv[1])\n"
        "with write_transaction(store.engine, **REPEATABLE) as conn:\n"
        "    conn.execute(text(\"INSERT INTO marks (name) VALUES ('other')\"))\n"
    )
    return subprocess.Popen([sys.executable, "-c", script, f"sqlite:///{path}"])


def make_marks(store: Store) -> None:
    with write_transaction(store.engine) as conn:
        conn.execute(text("CREATE TABLE marks (name TEXT)"))


def marks(store: Store) -> list[str]:
    with store.engine.connect().execution_options(**READ_ONLY) as conn:
        return [r[0] for r in conn.execute(text("SELECT name FROM marks ORDER BY rowid"))]


@contextmanager
def write_lock_held(path: Path) -> Iterator[None]:
    """SQLite's write lock, held as another process would (no gate, no turnstile)."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO marks (name) VALUES ('holder')")
        yield
        conn.execute("COMMIT")
    finally:
        conn.close()


def test_no_writer_of_another_process_starts_while_an_acknowledgement_waits(
    db: tuple[Store, Path],
) -> None:
    store, path = db
    make_marks(store)
    waiting = Turnstile(f"{path}-turnstile")
    with waiting.first():
        other = other_process_write(path)
        try:
            # Nothing holds SQLite's own lock: only the turnstile keeps it out.
            with pytest.raises(subprocess.TimeoutExpired):
                other.wait(timeout=1.5)
            assert marks(store) == []
        except BaseException:
            other.kill()
            raise
    assert other.wait(timeout=30) == 0
    assert marks(store) == ["other"]
    # Only the service's user may take it (and so hold writers back).
    assert stat.S_IMODE(os.stat(f"{path}-turnstile").st_mode) & 0o077 == 0


def test_an_acknowledging_write_holds_the_turnstile_only_while_it_waits(
    db: tuple[Store, Path],
) -> None:
    store, path = db
    make_marks(store)
    done = threading.Event()

    def acknowledge() -> None:
        with write_transaction(store.engine, **ACKNOWLEDGING) as conn:
            conn.execute(text("INSERT INTO marks (name) VALUES ('ack')"))
        done.set()

    ack = threading.Thread(target=acknowledge, daemon=True)
    with write_lock_held(path):
        ack.start()
        wait_for(lambda: turnstile_held(path))
        assert not done.is_set()
    ack.join(timeout=30)
    assert done.is_set() and marks(store) == ["holder", "ack"]
    assert not turnstile_held(path)

    # Inside its transaction it no longer holds anybody back.
    with write_transaction(store.engine, **ACKNOWLEDGING):
        assert not turnstile_held(path)


def big(delivery_id: str) -> NewDelivery:
    return NewDelivery(delivery_id, "push", None, 7, os.urandom(BIG))


def test_acknowledging_commits_fold_the_wal_back_only_once_quiet(db: tuple[Store, Path]) -> None:
    store, path = db
    writer = BatchWriter(store.inbox, quiet_seconds=3600)
    before = path.stat().st_size
    # Past SQLite's automatic checkpoint (1000 pages): a commit would fold it.
    assert writer.write([big(f"d{i}") for i in range(100)]) == [True] * 100
    assert path.stat().st_size - before < BIG
    writer.close()  # the last fold
    assert path.stat().st_size - before > 90 * BIG

    quick = BatchWriter(store.inbox, quiet_seconds=0.05)
    try:
        before = path.stat().st_size
        quick.write([big(f"e{i}") for i in range(100)])
        wait_for(lambda: path.stat().st_size - before > 90 * BIG)
    finally:
        quick.close()


def test_other_writers_still_fold_on_their_commits(db: tuple[Store, Path]) -> None:
    store, path = db
    with store.engine.connect() as conn:
        # A pooled connection serves acknowledging and other writes in turn.
        with conn.execution_options(**ACKNOWLEDGING).begin():
            conn.execute(text("CREATE TABLE blobs (b BLOB)"))
        before = path.stat().st_size
        with conn.execution_options(odw_acknowledging=False).begin():
            for _ in range(100):
                conn.execute(text("INSERT INTO blobs VALUES (:b)"), {"b": os.urandom(BIG)})
    assert path.stat().st_size - before > 90 * BIG


def test_a_holder_killed_while_waiting_holds_nobody_back(db: tuple[Store, Path]) -> None:
    store, path = db
    script = (
        "import sys, time\n"
        "from app.store.engine import Turnstile\n"
        "with Turnstile(sys.argv[1]).first():\n"
        "    time.sleep(600)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", script, f"{path}-turnstile"])
    try:
        wait_for(lambda: turnstile_held(path), timeout=30)
    finally:
        holder.kill()
        holder.wait(timeout=30)
    assert not turnstile_held(path)
    make_marks(store)
    assert marks(store) == []
