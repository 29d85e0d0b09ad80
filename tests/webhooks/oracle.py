"""GitHub's published webhook examples (npm `@octokit/webhooks-examples`),
installed by `make test` into .cache/oracles; without them the tests skip (fail in CI)."""

from __future__ import annotations

import copy
import json
import uuid
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from tests import needs
from webhooks.signature import sign

REPO_ROOT = Path(__file__).resolve().parents[2]
INDEX = (
    REPO_ROOT / ".cache/oracles/node_modules/@octokit/webhooks-examples/api.github.com/index.json"
)

# The events ODW handles (routes) in this release.
ODW_EVENTS = (
    "installation",
    "installation_repositories",
    "push",
    "pull_request",
    "issue_comment",
    "check_run",
    "check_suite",
    "status",
    "workflow_run",
    "workflow_job",
)

# Examples of App deliveries carry the installation; many published examples
# were captured from repository webhooks and lack it.
INSTALLATION = {"id": 777001, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNzc3MDAx"}


@dataclass(frozen=True)
class Example:
    event: str
    index: int
    payload: dict[str, Any]

    @property
    def id(self) -> str:
        action = self.payload.get("action")
        return f"{self.event}.{action}#{self.index}" if action else f"{self.event}#{self.index}"

    def as_app_delivery(self) -> dict[str, Any]:
        payload = copy.deepcopy(self.payload)
        payload.setdefault("installation", dict(INSTALLATION))
        return payload


@cache
def _index() -> tuple[dict[str, Any], ...]:
    if not INDEX.is_file():
        return ()
    return tuple(json.loads(INDEX.read_text(encoding="utf-8")))


def available() -> bool:
    return bool(_index())


def examples(*events: str) -> list[Example]:
    found = []
    for entry in _index():
        if entry["name"] in events:
            found += [Example(entry["name"], i, ex) for i, ex in enumerate(entry["examples"])]
    return found


def params(*events: str) -> list[Any]:
    """pytest parameters, one per example, or a single skipped one."""
    found = examples(*events)
    if not found:
        return [needs.unavailable_param(needs.ORACLES, id="no-examples")]
    return [pytest.param(ex, id=ex.id) for ex in found]


def require(*events: str) -> list[Example]:
    found = examples(*events)
    if not found:
        needs.unavailable(needs.ORACLES)
    return found


def signed(
    secret: str, event: str, payload: dict[str, Any] | bytes, delivery_id: str | None = None
) -> tuple[bytes, dict[str, str]]:
    """A body and headers as GitHub sends them."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "GitHub-Hookshot/odw-test",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery_id or str(uuid.uuid4()),
        "X-GitHub-Hook-ID": "1",
        "X-Hub-Signature-256": sign(secret, body),
    }
    return body, headers
