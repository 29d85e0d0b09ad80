"""The intake socket's frames: a delivery one way, one byte back.

A request is a 4-byte length, then the fixed head (`HEAD`: the lengths of
the id, event and action, the installation id with a flag for none), the
three texts in UTF-8 and the body. The answer is `NEW`, `DUPLICATE` or
`FAILED`, one per request, in order. An empty frame (`PING`) asks whether
the intake is serving and is answered `PONG` in its turn. Fixed fields
rather than a general serialiser: the reader is a process that stores what
it reads, so it decodes only lengths and texts it can check.
"""

from __future__ import annotations

import struct

from app.store.inbox import NewDelivery
from webhooks.delivery import MAX_BODY_BYTES

NEW, DUPLICATE, FAILED, PONG = b"N", b"D", b"F", b"P"

_LENGTH = struct.Struct("!I")
PING = _LENGTH.pack(0)
HEAD = struct.Struct("!HHHBq")
_NO_ACTION = 0xFFFF
# Headers and action are at most 100 characters at the edge; UTF-8 may
# take four bytes for one.
MAX_TEXT = 400
MAX_FRAME = HEAD.size + 3 * MAX_TEXT + MAX_BODY_BYTES


class WireError(Exception):
    """A frame that is not one `encode` writes: the connection is dropped."""


def encode(d: NewDelivery) -> bytes:
    ident, event = d.id.encode(), d.event.encode()
    action = b"" if d.action is None else d.action.encode()
    if max(len(ident), len(event), len(action)) > MAX_TEXT:
        raise WireError("a delivery's id, event or action is too long for the intake")
    head = HEAD.pack(
        len(ident),
        len(event),
        _NO_ACTION if d.action is None else len(action),
        d.installation_id is not None,
        d.installation_id or 0,
    )
    size = len(head) + len(ident) + len(event) + len(action) + len(d.body)
    return b"".join((_LENGTH.pack(size), head, ident, event, action, d.body))


class FrameReader:
    """Reassembles requests from a stream: `feed` returns those completed,
    None standing for a `PING`."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes | memoryview) -> list[NewDelivery | None]:
        self._buf += data
        done: list[NewDelivery | None] = []
        while len(self._buf) >= _LENGTH.size:
            (size,) = _LENGTH.unpack_from(self._buf)
            if size and not HEAD.size <= size <= MAX_FRAME:
                raise WireError(f"frame of {size} bytes")
            end = _LENGTH.size + size
            if len(self._buf) < end:
                break
            done.append(decode(memoryview(self._buf)[_LENGTH.size : end]) if size else None)
            del self._buf[:end]
        return done


def decode(frame: memoryview) -> NewDelivery:
    id_len, event_len, action_len, has_installation, installation = HEAD.unpack_from(frame)
    if has_installation > 1 or (not has_installation and installation):
        raise WireError("bad installation flag")
    lengths = (id_len, event_len, 0 if action_len == _NO_ACTION else action_len)
    if max(lengths) > MAX_TEXT:
        raise WireError("a text longer than the edge allows")
    texts = HEAD.size + sum(lengths)
    if texts > len(frame):
        raise WireError("texts longer than the frame")
    decoded = []
    pos = HEAD.size
    try:
        for n in lengths:
            decoded.append(str(frame[pos : pos + n], "utf-8"))
            pos += n
    except UnicodeDecodeError:
        raise WireError("texts are not UTF-8") from None
    ident, event, action = decoded
    return NewDelivery(
        ident,
        event,
        None if action_len == _NO_ACTION else action,
        installation if has_installation else None,
        bytes(frame[texts:]),
    )
