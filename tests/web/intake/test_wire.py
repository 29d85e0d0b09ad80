"""The intake socket's frames: what the HTTP processes write is exactly what
the intake reads, however the stream is cut, and anything else is refused."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.store.inbox import NewDelivery
from app.web.intake.wire import HEAD, MAX_FRAME, PING, FrameReader, WireError, encode

visible = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=100)
deliveries = st.builds(
    NewDelivery,
    id=visible,
    event=visible,
    action=st.none() | st.text(st.characters(exclude_categories=("Cs",)), max_size=100),
    installation_id=st.none() | st.integers(1, 2**63 - 1),
    body=st.binary(max_size=3000),
)


@settings(max_examples=150, deadline=None)
@given(
    items=st.lists(st.none() | deliveries, max_size=12),
    cuts=st.lists(st.integers(0, 40_000), max_size=8),
)
def test_what_is_written_is_read_back_however_the_stream_is_cut(
    items: list[NewDelivery | None], cuts: list[int]
) -> None:
    stream = b"".join(PING if d is None else encode(d) for d in items)
    reader = FrameReader()
    read: list[NewDelivery | None] = []
    start = 0
    for cut in [*sorted({min(c, len(stream)) for c in cuts}), len(stream)]:
        read += reader.feed(memoryview(stream)[start:cut])
        start = cut
    assert read == items


def frame(body: bytes) -> bytes:
    return struct.pack("!I", len(body)) + body


@pytest.mark.parametrize(
    "data",
    [
        struct.pack("!I", MAX_FRAME + 1),
        frame(b"x" * (HEAD.size - 1)),
        frame(HEAD.pack(1, 1, 0xFFFF, 2, 0) + b"ab"),
        frame(HEAD.pack(1, 1, 0xFFFF, 0, 7) + b"ab"),
        frame(HEAD.pack(50, 1, 0xFFFF, 0, 0) + b"ab"),
        frame(HEAD.pack(1, 1, 0xFFFF, 0, 0) + b"\xff" + b"e"),
        frame(HEAD.pack(1, 1, 401, 0, 0) + b"ie" + b"a" * 401),
    ],
    ids=[
        "longer-than-any-delivery",
        "shorter-than-its-head",
        "unknown-installation-flag",
        "installation-without-its-flag",
        "texts-past-the-frame",
        "texts-not-utf8",
        "action-longer-than-the-edge-allows",
    ],
)
def test_a_frame_encode_would_not_write_is_refused(data: bytes) -> None:
    with pytest.raises(WireError):
        FrameReader().feed(data)


def test_texts_longer_than_the_edge_allows_are_not_sent() -> None:
    with pytest.raises(WireError, match="too long"):
        encode(NewDelivery("x" * 401, "push", None, None, b"{}"))
