"""The WSGI edge refuses from the headers, without reading the body, under
any WSGI server (gunicorn's worker does the same earlier, see
tests/service/test_live_admission.py)."""

from __future__ import annotations

import io

import pytest
from flask import Flask
from werkzeug.test import EnvironBuilder

from tests.webhooks import oracle
from tests.webhooks.conftest import SECRET


class Unread(io.BytesIO):
    """A request body that must not be read."""

    def read(self, _size: int | None = -1) -> bytes:
        raise AssertionError("the body was read")

    def readinto(self, _buffer: object) -> int:
        raise AssertionError("the body was read")


@pytest.mark.parametrize(
    ("drop_signature", "length", "status"),
    [(True, "24000000", 401), (True, None, 401), (False, "25000001", 413)],
    ids=["unsigned", "unsigned-chunked", "over-the-limit"],
)
def test_the_edge_answers_from_the_headers_without_reading_the_body(
    app: Flask, drop_signature: bool, length: str | None, status: int
) -> None:
    _, headers = oracle.signed(SECRET, "push", b"{}", "d-unread")
    if drop_signature:
        del headers["X-Hub-Signature-256"]
    environ = EnvironBuilder(path="/webhooks", method="POST", headers=headers).get_environ()
    environ["wsgi.input"] = Unread()
    if length is None:  # chunked, as a server that decodes it presents it
        environ.pop("CONTENT_LENGTH", None)
        environ["wsgi.input_terminated"] = True
    else:
        environ["CONTENT_LENGTH"] = length
    answered: list[tuple[str, list[tuple[str, str]]]] = []
    body = b"".join(app.wsgi_app(environ, lambda s, h: answered.append((s, h))))
    ((line, response_headers),) = answered
    assert int(line.split()[0]) == status, body
    assert ("Connection", "close") in response_headers
