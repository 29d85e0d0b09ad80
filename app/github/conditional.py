"""Conditional GETs (ETag / If-None-Match) for what the App polls: a 304 costs
no rate limit and returns the body remembered from the last 200."""

from __future__ import annotations

import json
import threading
from typing import Any

from app.github.transport import Transport


class ConditionalGets:
    def __init__(self, transport: Transport) -> None:
        self._t = transport
        self._seen: dict[str, tuple[str, Any, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def get(self, suffix: str, params: dict[str, Any] | None = None) -> Any:
        return self.get_page(suffix, params)[1]

    def get_page(
        self, suffix: str, params: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], Any]:
        """The answer's headers (a `Link` to further pages among them) and body."""
        key = suffix + "?" + json.dumps(params or {}, sort_keys=True)
        with self._lock:
            etag, body, seen_headers = self._seen.get(key, ("", None, {}))
        headers = {"If-None-Match": etag} if etag else None
        response_headers, data = self._t.request("GET", suffix, params=params, headers=headers)
        if data is None and etag:
            return seen_headers, body
        new_etag = {k.lower(): v for k, v in response_headers.items()}.get("etag")
        if new_etag:
            with self._lock:
                self._seen[key] = (new_etag, data, dict(response_headers))
        return response_headers, data
