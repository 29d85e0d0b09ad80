"""The operator endpoints' guard: `Authorization: Bearer $ODW_ADMIN_TOKEN`.

`/metrics` and everything under `/api/` show event names, counts and delivery
errors, so they answer only a caller holding the admin token (compared in
constant time), and do not exist (404) while no token is configured. The
guard runs before routing, so an `/api/` route added later is covered too.
`/webhooks` is authenticated by its signature; `/healthz` says only whether
the service is up.
"""

from __future__ import annotations

import hmac

from flask import Flask, Response, jsonify, request


def is_operator_path(path: str) -> bool:
    return path == "/metrics" or path.startswith(("/metrics/", "/api/"))


def authorised(header: str | None, token: str) -> bool:
    """Whether `header` is `Bearer <token>`; constant time in the token."""
    scheme, _, given = (header or "").partition(" ")
    # compare_digest takes inputs of any length and never exits early.
    ok = hmac.compare_digest(given.strip().encode(), token.encode())
    return ok and scheme.lower() == "bearer"


def guard_operator_endpoints(app: Flask, token: str | None) -> None:
    @app.before_request
    def _guard() -> tuple[Response, int] | None:
        if not is_operator_path(request.path):
            return None
        if token is None:
            return jsonify({"error": "not found"}), 404
        if authorised(request.headers.get("Authorization"), token):
            return None
        resp = jsonify({"error": "this endpoint needs Authorization: Bearer $ODW_ADMIN_TOKEN"})
        resp.headers["WWW-Authenticate"] = 'Bearer realm="odw"'
        return resp, 401
