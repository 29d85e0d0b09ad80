"""Marker detection in a chunked, coloured stream and bounded output capture."""

from __future__ import annotations

import io
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from actions.stream import EchoBudget, HeadTailCapture, MarkerScanner
from app.core.verdict import completion_marker

TOKEN = "tok-abc-12345"
MARKER = completion_marker(TOKEN).encode()


def scan(chunks: list[bytes], token: str = TOKEN) -> MarkerScanner:
    s = MarkerScanner(token)
    for c in chunks:
        s.feed(c)
    s.finish()
    return s


COLOURED = (
    b"log\n\x1b[32m" + MARKER[:9] + b"\x1b[0m\x1b]8;;http://e\x1b\\" + MARKER[9:] + b"\x1b[K\n"
)


@pytest.mark.parametrize(
    "cut", range(1, len(COLOURED)), ids=[f"split-at-{n}" for n in range(1, len(COLOURED))]
)
def test_marker_found_at_every_split_point_even_inside_escapes(cut: int) -> None:
    assert scan([COLOURED[:cut], COLOURED[cut:]]).seen


def test_marker_one_byte_at_a_time() -> None:
    assert scan([bytes([b]) for b in COLOURED]).seen


@given(st.lists(st.integers(min_value=0, max_value=len(COLOURED)), max_size=8))
@settings(max_examples=200, deadline=None)
def test_marker_found_for_any_chunking(cuts: list[int]) -> None:
    points = sorted({0, len(COLOURED), *cuts})
    chunks = [COLOURED[a:b] for a, b in itertools.pairwise(points)]
    assert scan(chunks).seen


@pytest.mark.parametrize(
    "data",
    [
        completion_marker("tok-abc-1234").encode() + b"\n",  # a shorter, older token
        MARKER + b"5\n",  # a longer token sharing the prefix
        MARKER.replace(b" ", b"  ") + b"\n",
        b"ODW-STAGE-COMPLETE\n" + TOKEN.encode() + b"\n",
    ],
    ids=["older-token", "longer-token", "two-spaces", "split-lines"],
)
def test_near_misses_are_not_the_marker(data: bytes) -> None:
    assert not scan([data]).seen


@pytest.mark.parametrize(
    "data",
    [
        b"ODW_COMPLETION_MARKER=" + MARKER + b"\n",
        b"PATH=/bin\0ODW_X=" + MARKER + b"\0HOME=/root\n",
        b"+ echo '" + MARKER + b"'\n",
        MARKER + b" and more\n",
        b"done: " + MARKER,
        b"x\r" + MARKER + b"\n",
    ],
    ids=["env-dump", "proc-environ", "shell-trace", "trailing-text", "leading-text", "carriage"],
)
def test_a_marker_inside_a_longer_line_does_not_count(data: bytes) -> None:
    s = scan([data[:7], data[7:]])
    assert not s.seen and s.foreign == []


@pytest.mark.parametrize(
    "data",
    [
        b"  \t" + MARKER + b"  \r\n",
        b"\x1b[1m \x1b[32m" + MARKER + b"\x1b[0m \n",
        b" " * 10000 + MARKER + b" " * 10000 + b"\n",
        b"noise " * 5000 + b"\n" + MARKER,
    ],
    ids=["whitespace", "escapes-and-whitespace", "long-whitespace", "last-line-unterminated"],
)
def test_a_marker_on_a_line_of_its_own_counts(data: bytes) -> None:
    chunks = [data[i : i + 999] for i in range(0, len(data), 999)]
    assert scan(chunks).seen


def test_long_whitespace_inside_the_marker_is_not_collapsed() -> None:
    data = b"ODW-STAGE-COMPLETE" + b" " * 10000 + TOKEN.encode() + b"\n"
    assert not scan([data[i : i + 512] for i in range(0, len(data), 512)]).seen


def test_foreign_markers_are_reported() -> None:
    s = scan([completion_marker("tok-old-0001").encode() + b"\n" + b"x" * 100 + b"\n"])
    assert not s.seen
    assert s.foreign == ["tok-old-0001"]


def test_marker_at_the_very_end_waits_for_the_stream_to_end() -> None:
    s = MarkerScanner(TOKEN)
    s.feed(MARKER)
    assert not s.seen  # the token might continue in the next chunk
    s.finish()
    assert s.seen


def test_capture_keeps_head_and_tail_within_bounds() -> None:
    sink = io.BytesIO()
    cap = HeadTailCapture(head=100, tail=50, sink=sink)
    data = bytes(range(256)) * 400
    for i in range(0, len(data), 37):
        cap.feed(data[i : i + 37])
        assert len(cap._tail) <= 2 * 50 + 37
    cap.finish()
    assert cap.total == len(data)
    out = sink.getvalue()
    elided = len(data) - 150
    assert out == data[:100] + f"\n[... {elided} bytes elided by ODW ...]\n".encode() + data[-50:]


def test_capture_without_overflow_is_exact() -> None:
    sink = io.BytesIO()
    cap = HeadTailCapture(head=100, tail=50, sink=sink)
    cap.feed(b"hello \x1b[31mworld\x1b[0m\n")
    cap.finish()
    assert sink.getvalue() == b"hello \x1b[31mworld\x1b[0m\n"
    assert cap.tail_text(100) == "hello world\n"


def test_echo_stops_at_its_budget() -> None:
    out = io.BytesIO()
    echo = EchoBudget(out, 10)
    for _ in range(5):
        echo.feed(b"abcdef")
    assert out.getvalue().startswith(b"abcdefabcd\n[odw: echo budget spent")
    assert out.getvalue().count(b"echo budget") == 1
