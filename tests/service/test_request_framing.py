"""How the HTTP worker's event loop decides a request is whole (and may go
to a thread): byte by byte, as a slow client would send it."""

from __future__ import annotations

import pytest

from app.web.framing import RequestFraming


def first_complete_at(raw: bytes, body_cap: int = 1000) -> int | None:
    """Feed one byte at a time; how many bytes it took to be whole."""
    framing = RequestFraming(body_cap=body_cap)
    for i in range(len(raw)):
        if framing.feed(raw[i : i + 1]):
            return i + 1
    return None


HEAD = b"POST /webhooks HTTP/1.1\r\nHost: x\r\n"


@pytest.mark.parametrize(
    ("raw", "whole_at"),
    [
        (b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", None),
        (HEAD + b"Content-Length: 5\r\n\r\nhello", None),
        (HEAD + b"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", None),
        (HEAD + b"Transfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n0\r\nT: 1\r\n\r\n", None),
    ],
    ids=["no-body", "content-length", "chunked", "chunked-with-extension-and-trailer"],
)
def test_a_request_is_whole_at_its_last_byte_and_not_before(
    raw: bytes, whole_at: int | None
) -> None:
    assert first_complete_at(raw) == len(raw)


def test_a_body_over_the_cap_goes_on_without_the_rest() -> None:
    declared = HEAD + b"Content-Length: 5000\r\n\r\n"
    assert first_complete_at(declared + b"x" * 10) == len(declared)
    chunked = HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + b"3e8\r\n" + b"x" * 1000 + b"\r\n"
    over = chunked + b"1\r\nx"
    assert first_complete_at(over + b"\r\n0\r\n\r\n") == len(over)


def test_a_huge_announced_chunk_waits_for_its_data() -> None:
    """Announcing more than the cap is not enough: the data must arrive (in
    the event loop) before a thread reads it, or a slow sender holds it."""
    announced = HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + b"100000\r\n"
    assert first_complete_at(announced + b"x" * 1000) is None
    assert first_complete_at(announced + b"x" * 1001) == len(announced) + 1001


@pytest.mark.parametrize(
    "headers",
    [b"Content-Length: 5\r\nContent-Length: 6\r\n", b"Content-Length: x\r\n"],
    ids=["two-lengths", "not-a-number"],
)
def test_ambiguous_framing_goes_on_at_once_for_the_parser_to_refuse(headers: bytes) -> None:
    raw = HEAD + headers + b"\r\n"
    assert first_complete_at(raw + b"hello") == len(raw)


def test_expect_100_continue_is_answered_here_and_removed() -> None:
    framing = RequestFraming()
    raw = HEAD + b"Expect: 100-continue\r\nContent-Length: 2\r\n\r\n"
    assert not framing.feed(raw)
    assert framing.wants_continue
    assert framing.feed(b"{}")
    assert b"Expect" not in framing.buf
    assert framing.buf.endswith(b"Content-Length: 2\r\n\r\n{}")
