"""Octokit's recorded exchanges with api.github.com (npm `@octokit/fixtures`,
installed by `make oracles`), served back under `requests` with `responses`.

Each scenario is a list of real requests and GitHub's answers to them. They
are replayed at a chosen API root: `https://api.github.com` as recorded, or a
GitHub Enterprise Server root with its `/api/v3` prefix, where every URL
GitHub wrote into an answer (`Link`, `Location`, `url` fields) is rebased the
same way. A request is answered only if it matches the recording: method,
URL (query included once the client follows a link GitHub gave), the
recorded `Authorization` scheme and token, and every field of a recorded
body.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import responses
from responses import matchers

from tests.fakegithub.oracles import RECORDED, RECORDED_INDEX, require_oracle

RECORDED_ROOT = "https://api.github.com"
# The token Octokit wrote into its recordings in place of a real one.
RECORDED_TOKEN = "0" * 39 + "1"
# Headers that describe the recorded bytes on the wire, not the answer.
WIRE_HEADERS = frozenset({"content-length", "transfer-encoding", "content-encoding", "connection"})


@dataclass(frozen=True)
class Exchange:
    method: str
    path: str  # as recorded, query included
    status: int
    body: Any
    response: Any
    headers: dict[str, str]

    @property
    def query(self) -> str:
        return urlsplit(self.path).query


def scenario(name: str) -> list[Exchange]:
    """The recorded exchanges of scenario `name`, in order."""
    require_oracle(RECORDED_INDEX)
    path: Path = RECORDED / name / "normalized-fixture.json"
    return [
        Exchange(
            e["method"].upper(),
            e["path"],
            int(e["status"]),
            e.get("body"),
            e.get("response"),
            {k: str(v) for k, v in (e.get("headers") or {}).items()},
        )
        for e in json.loads(path.read_text(encoding="utf-8"))
    ]


def rebase(value: Any, root: str) -> Any:
    """Every api.github.com URL in `value` moved under `root`."""
    if root == RECORDED_ROOT:
        return value
    text = json.dumps(value) if not isinstance(value, str) else value
    moved = text.replace(RECORDED_ROOT, root)
    return json.loads(moved) if not isinstance(value, str) else moved


def on_wire(root: str) -> str:
    """`root` as PyGithub sends it: with the port spelled out (`:443`)."""
    parts = urlsplit(root)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return f"{parts.scheme}://{parts.hostname}:{port}{parts.path}"


def serve(
    mock: responses.RequestsMock, root: str, exchange: Exchange, *, own_page_size: bool = False
) -> None:
    """Answer `exchange` at `root`. `own_page_size`: the client asks its own
    `per_page` for a first page (the recording asked 3), so that query is not matched."""
    path = exchange.path.split("?", 1)[0] if own_page_size else exchange.path
    match = [matchers.header_matcher({"Authorization": f"token {RECORDED_TOKEN}"})]
    if isinstance(exchange.body, dict) and exchange.body:
        match.append(matchers.json_params_matcher(exchange.body, strict_match=False))
    headers = {
        k: rebase(v, root)
        for k, v in exchange.headers.items()
        if k.lower() not in WIRE_HEADERS and k.lower() != "content-type"
    }
    content_type = exchange.headers.get("content-type", "application/json; charset=utf-8")
    answer = exchange.response
    if answer is None or answer == "":
        body = ""
    elif isinstance(answer, str):
        body = answer
    else:
        body = json.dumps(rebase(answer, root))
    mock.add(
        exchange.method,
        on_wire(root) + path,
        body=body,
        status=exchange.status,
        headers=headers,
        content_type=content_type.split(";")[0] if body else None,
        match=match,
    )
