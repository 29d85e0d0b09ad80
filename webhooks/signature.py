"""`X-Hub-Signature-256`: HMAC-SHA256 of the raw body, compared in constant time.

https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable

PREFIX = "sha256="


def sign(secret: str | bytes, body: bytes) -> str:
    """The header value GitHub sends for `body` signed with `secret`."""
    key = secret.encode() if isinstance(secret, str) else secret
    return PREFIX + hmac.new(key, body, hashlib.sha256).hexdigest()


def verify(body: bytes, header: str | None, secrets: Iterable[str | bytes]) -> bool:
    """True when `header` is the signature of `body` under any of `secrets`.

    Every secret is checked (no early exit) so timing does not reveal which
    one matched; during rotation both the new and the previous secret pass.
    """
    if not header or not header.startswith(PREFIX):
        return False
    given = header.encode("ascii", "replace")
    ok = False
    for secret in secrets:
        if secret:
            ok |= hmac.compare_digest(sign(secret, body).encode(), given)
    return ok
