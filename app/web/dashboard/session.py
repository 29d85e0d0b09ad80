"""Who may read the dashboard: the holder of the admin token.

A script sends `Authorization: Bearer $ODW_ADMIN_TOKEN` as to `/metrics`. A
browser signs in once with the token in a form (POSTed, so it never sits in a
URL, a history or a proxy's log) and gets a cookie that is not the token: an
expiry and an HMAC of it keyed by the token. The cookie is `HttpOnly` (no
script reads it), `SameSite=Strict` (no other site's link or form carries it),
`Secure` (browsers send it only over HTTPS, and to loopback), scoped to
`/dashboard`, and valid for `SESSION_SECONDS`. Nothing is stored: every
process and host behind a load balancer checks it the same way, and rotating
the admin token ends every session.
"""

from __future__ import annotations

import hashlib
import hmac
import time

from app.web.admin import authorised

COOKIE = "odw_dashboard"
SESSION_SECONDS = 12 * 3600
_PURPOSE = b"odw-dashboard-session-v1:"


def _mac(token: str, expiry: int) -> str:
    return hmac.new(token.encode(), _PURPOSE + str(expiry).encode(), hashlib.sha256).hexdigest()


def issue(token: str, now: float | None = None) -> str:
    """A session cookie's value, valid for `SESSION_SECONDS` from `now`."""
    expiry = int(now if now is not None else time.time()) + SESSION_SECONDS
    return f"{expiry}.{_mac(token, expiry)}"


def valid(cookie: str | None, token: str, now: float | None = None) -> bool:
    """Whether `cookie` was issued with `token` and has not expired."""
    expiry_text, _, mac = (cookie or "").partition(".")
    if not expiry_text.isdigit() or len(expiry_text) > 12:
        return False
    expiry = int(expiry_text)
    fresh = expiry > (now if now is not None else time.time())
    return hmac.compare_digest(mac.encode(), _mac(token, expiry).encode()) and fresh


def signed_in(header: str | None, cookie: str | None, token: str) -> bool:
    """The bearer header (scripts) or the session cookie (browsers)."""
    return authorised(header, token) or valid(cookie, token)


def given_token_ok(given: str, token: str) -> bool:
    """The sign-in form's token, compared in constant time."""
    return hmac.compare_digest(given.strip().encode(), token.encode())
