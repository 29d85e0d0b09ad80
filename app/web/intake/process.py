"""The intake process of `odw serve`: every HTTP process's deliveries,
committed in shared batches by one single-threaded loop.

A writer thread inside an HTTP process has to win the interpreter back from
the request threads after each database call; under a burst that made one
commit of a few deliveries take several times its own duration, and the
writer was the bottleneck. Here the loop owns its interpreter: it reads
every request that has arrived, stores them with `BatchWriter` (one
transaction, one sync), and answers each only after the commit.

Its listening socket comes from the master (`listener.py`).
"""

from __future__ import annotations

import contextlib
import logging
import selectors
import socket
from collections.abc import Callable

from app.store.inbox import NewDelivery
from app.web.intake.batch_writer import MAX_BATCH, BatchWriter
from app.web.intake.wire import DUPLICATE, FAILED, NEW, PONG, FrameReader, WireError

log = logging.getLogger("odw.intake")

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
