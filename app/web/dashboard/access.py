"""Who may read the dashboard: the holder of the admin token.

A script sends `Authorization: Bearer $ODW_ADMIN_TOKEN`, as to `/metrics`. A
browser uses HTTP Basic authentication: any user name, the admin token as the
password, asked for by the browser's own prompt. So the token never sits in a
URL (history, proxy logs, `Referer`) nor in a request body (the edge refuses
every unsigned body before reading it, `app.web.admission`), no cookie exists
to steal or to forge, and every process and host behind a load balancer
checks the same way. The pages only read, so a request a browser sends with
its cached credentials on another site's behalf can change nothing, and
their Content-Security-Policy forbids framing them.
"""

from __future__ import annotations

import base64
import binascii
import hmac

from app.web.admin import authorised

CHALLENGE = 'Basic realm="ODW dashboard", charset="UTF-8"'


def basic_password(header: str | None) -> str | None:
    """The password of an `Authorization: Basic ...` header, if it is one."""
    scheme, _, encoded = (header or "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    _user, sep, password = decoded.partition(":")
    return password if sep else None


def allowed(header: str | None, token: str) -> bool:
    """The bearer token (scripts) or Basic with the token as password (browsers),
    compared in constant time."""
    if authorised(header, token):
        return True
    password = basic_password(header)
    return password is not None and hmac.compare_digest(password.encode(), token.encode())
