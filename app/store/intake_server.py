"""The intake process of `odw serve`: every HTTP process's deliveries,
committed in shared batches by one single-threaded loop.

A writer thread inside an HTTP process has to win the interpreter back from
the request threads after each database call; under a burst that made one
commit of a few deliveries take several times its own duration, and the
writer was the bottleneck. Here the loop owns its interpreter: it reads
every request that has arrived, stores them with `BatchWriter` (one
transaction, one sync), and answers each only after the commit.

The master binds the listening socket in a directory only its user can
enter and hands it down, so a restarted intake takes over the same socket
and connections made meanwhile wait in its backlog.
"""

from __future__ import annotations

import contextlib
import logging
import os
import selectors
import shutil
import socket
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.liveness import pid_alive
from app.store.inbox import NewDelivery
from app.store.intake import MAX_BATCH, BatchWriter
from app.store.intake_wire import DUPLICATE, FAILED, NEW, PONG, FrameReader, WireError

log = logging.getLogger("odw.intake")

PREFIX = "odw-intake-"
RECV_SIZE = 1 << 18
TICK_SECONDS = 1.0


def serve_intake(
    writer: BatchWriter,
    listener: socket.socket,
    keep_going: Callable[[], bool],
    tick: float = TICK_SECONDS,
) -> None:
    """Serve until `keep_going()` is false (checked at least every `tick` s)."""
    listener.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(listener, selectors.EVENT_READ, None)
    readers: dict[socket.socket, FrameReader] = {}
    scratch = memoryview(bytearray(RECV_SIZE))  # one buffer for every read
    try:
        while keep_going():
            arrived: list[tuple[socket.socket, NewDelivery | None]] = []
            for key, _ in sel.select(tick):
                if key.data is None:
                    _accept(listener, sel, readers)
                else:
                    arrived += _read(key.fileobj, scratch, sel, readers)  # type: ignore[arg-type]
            for start in range(0, len(arrived), MAX_BATCH):
                _commit(writer, arrived[start : start + MAX_BATCH], sel, readers)
    finally:
        for conn in list(readers):
            _close(conn, sel, readers)
        sel.close()
        writer.close()


def _accept(
    listener: socket.socket, sel: selectors.BaseSelector, readers: dict[socket.socket, FrameReader]
) -> None:
    while True:
        try:
            conn, _ = listener.accept()
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:  # out of descriptors: the rest wait in the backlog
            log.warning("cannot accept an intake connection: %s", exc)
            return
        conn.setblocking(False)
        readers[conn] = FrameReader()
        sel.register(conn, selectors.EVENT_READ, True)


def _read(
    conn: socket.socket,
    scratch: memoryview,
    sel: selectors.BaseSelector,
    readers: dict[socket.socket, FrameReader],
) -> list[tuple[socket.socket, NewDelivery | None]]:
    try:
        size = conn.recv_into(scratch)
    except (BlockingIOError, InterruptedError):
        return []
    except OSError:
        size = 0
    if not size:
        _close(conn, sel, readers)
        return []
    try:
        return [(conn, d) for d in readers[conn].feed(scratch[:size])]
    except WireError as exc:
        log.warning("intake connection dropped: %s", exc)
        _close(conn, sel, readers)
        return []


def _commit(
    writer: BatchWriter,
    arrived: list[tuple[socket.socket, NewDelivery | None]],
    sel: selectors.BaseSelector,
    readers: dict[socket.socket, FrameReader],
) -> None:
    stored = iter(writer.write([d for _, d in arrived if d is not None]))
    for conn, d in arrived:
        answer = PONG if d is None else _answer(next(stored))
        if conn not in readers:
            continue  # dropped meanwhile; its client reads an error
        try:
            # One byte to a client waiting for it: the buffer has room.
            if conn.send(answer) != 1:
                raise OSError("answer not sent")
        except OSError:
            _close(conn, sel, readers)


def _answer(result: bool | Exception) -> bytes:
    if isinstance(result, Exception):
        log.error("delivery not stored: %s", result)
        return FAILED
    return NEW if result else DUPLICATE


def _close(
    conn: socket.socket, sel: selectors.BaseSelector, readers: dict[socket.socket, FrameReader]
) -> None:
    readers.pop(conn, None)
    with contextlib.suppress(KeyError, ValueError, OSError):
        sel.unregister(conn)
    with contextlib.suppress(OSError):
        conn.close()


@dataclass
class PrivateListener:
    """A listening Unix socket in a fresh directory only this user may enter:
    whoever can connect can store deliveries."""

    sock: socket.socket
    path: str
    directory: str

    def close(self) -> None:
        self.sock.close()
        shutil.rmtree(self.directory, ignore_errors=True)


def private_listener(base: str | None = None) -> PrivateListener:
    """Bound in `$TMPDIR/odw-intake-<pid>-*` (or under `base`), after
    removing the directories left by masters that died without cleaning up."""
    parent = Path(base or tempfile.gettempdir())
    sweep_dead_listeners(parent)
    directory = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent)  # mode 0700
    path = str(Path(directory) / "intake.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(1024)
    return PrivateListener(sock, path, directory)


def sweep_dead_listeners(parent: Path) -> None:
    """Remove this user's listener directories whose master is gone (killed
    with SIGKILL, say): real directories only, never through a link."""
    for entry in parent.glob(f"{PREFIX}*-*"):
        pid = entry.name[len(PREFIX) :].split("-", 1)[0]
        if not pid.isdigit() or pid_alive(int(pid)):
            continue
        try:
            info = entry.lstat()
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
            shutil.rmtree(entry, ignore_errors=True)
