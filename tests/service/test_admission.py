"""The pure pieces of the edge's admission: what the headers alone refuse,
the in-flight budget, what a request is counted as holding, and the
settings that size them."""

from __future__ import annotations

import pytest

from app.service_settings import SettingsError, load_settings
from app.web.admission import BUSY, Budget, refuse_before_body
from app.web.framing import RequestFraming
from webhooks.delivery import MAX_BODY_BYTES

SIG = "sha256=" + "0" * 64


@pytest.mark.parametrize(
    ("signature", "length", "status"),
    [
        (None, 10, 401),
        ("", 10, 401),
        (None, None, 401),
        (None, MAX_BODY_BYTES + 1, 401),
        (SIG, MAX_BODY_BYTES + 1, 413),
        (None, 0, None),
        (SIG, None, None),
        (SIG, MAX_BODY_BYTES, None),
    ],
    ids=[
        "unsigned-body",
        "empty-signature",
        "unsigned-chunked",
        "unsigned-and-too-long",
        "signed-too-long",
        "no-body",
        "signed-chunked",
        "signed-at-the-limit",
    ],
)
def test_what_the_headers_alone_refuse(
    signature: str | None, length: int | None, status: int | None
) -> None:
    refusal = refuse_before_body(signature, length)
    assert (refusal.status if refusal else None) == status


def test_a_refusal_is_a_whole_response_that_closes_the_connection() -> None:
    raw = BUSY.http()
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"HTTP/1.1 503 Service Unavailable"
    assert b"Connection: close" in lines
    assert b"Retry-After: 1" in lines
    assert f"Content-Length: {len(body)}".encode() in lines
    assert body == b'{"error":"too many request bytes in flight; retry shortly"}'
    unsigned = refuse_before_body(None, 5)
    assert unsigned is not None
    assert b"Retry-After" not in unsigned.http()


def test_the_budget_refuses_what_does_not_fit_and_takes_back_what_is_given() -> None:
    budget = Budget(100)
    assert budget.take(60)
    assert not budget.take(41)
    assert budget.used == 60  # a refusal reserves nothing
    assert budget.take(40)
    budget.give(60)
    assert budget.take(60)
    assert not budget.take(1)


HEAD = b"POST /webhooks HTTP/1.1\r\nHost: x\r\n"


def test_a_request_is_counted_at_its_declared_size_once_its_headers_are_in() -> None:
    framing = RequestFraming()
    framing.feed(HEAD)
    assert not framing.head_done
    assert framing.expected() == len(HEAD)  # headers so far: what is buffered
    head = HEAD + f"X-Hub-Signature-256: {SIG}\r\nContent-Length: 5000\r\n\r\n".encode()
    framing = RequestFraming()
    framing.feed(head + b"xy")
    assert framing.head_done
    assert framing.signature == SIG.encode()
    assert framing.declared() == 5000
    assert framing.expected() == len(head) + 5000


def test_a_chunked_request_is_counted_as_it_arrives() -> None:
    framing = RequestFraming()
    head = HEAD + b"Transfer-Encoding: chunked\r\n\r\n"
    framing.feed(head + b"100000\r\n" + b"x" * 10)  # announces 1 MB, sends 10 bytes
    assert framing.declared() is None
    assert framing.signature is None
    assert framing.expected() == len(head) + 8 + 10
    framing.feed(b"x" * 90)
    assert framing.expected() == len(head) + 8 + 100


def test_a_request_without_a_body_declares_none() -> None:
    framing = RequestFraming()
    framing.feed(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    assert framing.declared() == 0


def test_the_in_flight_budget_and_header_timeout_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ODW_HTTP_INFLIGHT_MB", "ODW_HTTP_HEADER_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    defaults = load_settings()
    assert (defaults.http_inflight_mb, defaults.inflight_bytes) == (64, 64_000_000)
    assert defaults.http_header_timeout == 5.0
    assert load_settings(http_inflight_mb="26").inflight_bytes == 26_000_000
    for bad, words in [
        ("25", "ODW_HTTP_INFLIGHT_MB: must be at least 26, room for one 25 MB delivery"),
        ("lots", "ODW_HTTP_INFLIGHT_MB: Input should be a valid integer"),
    ]:
        monkeypatch.setenv("ODW_HTTP_INFLIGHT_MB", bad)
        with pytest.raises(SettingsError, match=words) as caught:
            load_settings()
        assert "\n" not in str(caught.value)
    monkeypatch.delenv("ODW_HTTP_INFLIGHT_MB")
    monkeypatch.setenv("ODW_HTTP_HEADER_TIMEOUT", "0")
    with pytest.raises(SettingsError, match="ODW_HTTP_HEADER_TIMEOUT: Input should be greater"):
        load_settings()


def test_a_chunked_body_is_too_large_once_more_than_the_cap_has_arrived() -> None:
    head = HEAD + b"Transfer-Encoding: chunked\r\n\r\n"
    framing = RequestFraming(body_cap=1000)
    assert not framing.feed(head + b"3e8\r\n" + b"x" * 1000 + b"\r\n")
    assert not framing.too_large  # exactly the cap
    assert framing.feed(b"1\r\nx")
    assert framing.too_large
    whole = RequestFraming(body_cap=1000)
    assert whole.feed(head + b"3e8\r\n" + b"x" * 1000 + b"\r\n0\r\n\r\n")
    assert not whole.too_large
