"""The `/webhooks` fuzz: hostile requests for the test suite (small) and
`make bench` (10,000 cases, bench/bench_fuzz.py).

Each case is a request a stranger or a broken sender could make: signed or
not, random headers, random or deeply nested JSON, and GitHub's own example
events with wrong types and out-of-range values planted inside. The check is
the edge's contract: never a 5xx, never a traceback in the logs (from the
request or from the worker that processes what was accepted), and nothing
stored for a request that was refused.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from flask.testing import FlaskClient
from hypothesis import strategies as st
from sqlalchemy import func, select

from app.service.handlers import build_router
from app.service.worker import DeliveryWorker, WorkerConfig
from app.store import Store
from app.store.schema import deliveries
from webhooks.signature import sign

EVENTS = (
    "push",
    "pull_request",
    "issue_comment",
    "check_run",
    "check_suite",
    "workflow_run",
    "workflow_job",
    "installation",
    "installation_repositories",
    "ping",
)

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63 - 2, max_value=2**70)
    | st.integers(min_value=-(2**70), max_value=-(2**63) + 2)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | st.text(alphabet=st.characters(codec="utf-8"), min_size=101, max_size=300)
    | st.just("a\x00b")
)
JSON = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def nested_json(depth: int) -> bytes:
    """An event whose `x` nests `depth` levels (built as text: the encoder would recurse)."""
    openers = ["[" if i % 2 else '{"a":' for i in range(depth)]
    closers = ["]" if i % 2 else "}" for i in reversed(range(depth))]
    return ('{"action":"created","x":' + "".join(openers) + "1" + "".join(closers) + "}").encode()


class Examples(list[tuple[str, dict[str, Any]]]):
    """GitHub's example events; shown by count (hypothesis prints its arguments)."""

    def __repr__(self) -> str:
        return f"<{len(self)} example events>"


@dataclass
class Case:
    body: bytes
    headers: dict[str, str]
    label: str


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield (*prefix, k)
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:3]):
            yield (*prefix, i)
            yield from _paths(v, (*prefix, i))


def _planted(payload: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(payload)
    target: Any = out
    for key in path[:-1]:
        if not _holds(target, key):
            return out  # an earlier planting replaced a container on the path
        target = target[key]
    if isinstance(target, dict) or _holds(target, path[-1]):
        target[path[-1]] = value
    return out


def _holds(container: Any, key: Any) -> bool:
    if isinstance(container, dict):
        return key in container
    return isinstance(container, list) and isinstance(key, int) and 0 <= key < len(container)


# Fields the edge and the handlers read first: most worth planting into.
HOT = [
    ("installation", "id"),
    ("action",),
    ("repository", "full_name"),
    ("sender", "login"),
    ("installation",),
    ("repository",),
    ("comment", "body"),
    ("workflow_run", "id"),
]


@st.composite
def _payload(draw: st.DrawFn, examples: list[tuple[str, dict[str, Any]]]) -> tuple[str, bytes, str]:
    kind = draw(st.sampled_from(["example", "example", "example", "json", "nested"]))
    if kind == "json" or not examples:
        return draw(st.sampled_from(EVENTS)), json.dumps(draw(JSON)).encode(), "random-json"
    if kind == "nested":
        depth = draw(st.integers(min_value=1, max_value=3000))
        return draw(st.sampled_from(EVENTS)), nested_json(depth), f"nested-{depth}"
    event, payload = examples[draw(st.integers(0, len(examples) - 1))]
    payload = copy.deepcopy(payload)
    payload.setdefault("installation", {"id": 777001})
    paths = [p for p in HOT if _has(payload, p[:-1])] + list(_paths(payload))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        path = draw(st.sampled_from(paths))
        if not _has(payload, path[:-1]):
            continue
        payload = _planted(payload, path, draw(JSON))
    return event, json.dumps(payload).encode(), "example-with-wrong-types"


def _has(value: Any, path: tuple[Any, ...]) -> bool:
    for key in path:
        if (isinstance(value, dict) and key in value) or (
            isinstance(value, list) and isinstance(key, int) and key < len(value)
        ):
            value = value[key]
        else:
            return False
    return isinstance(value, (dict, list))


@st.composite
def cases(draw: st.DrawFn, secret: str, examples: list[tuple[str, dict[str, Any]]]) -> Case:
    """One hostile request."""
    raw = draw(st.integers(0, 19)) == 0
    if raw:
        body, label, event = (
            draw(st.binary(max_size=200)),
            "random-bytes",
            draw(st.sampled_from(EVENTS)),
        )
    else:
        event, body, label = draw(_payload(examples))
    form = draw(st.integers(0, 9)) == 0
    content_type = "application/json"
    if form:
        body = urlencode({"payload": body.decode("utf-8", "replace")}).encode()
        content_type = "application/x-www-form-urlencoded"
    content_type = draw(
        st.sampled_from(
            [content_type] * 6 + ["text/plain", "", "application/json; charset=latin-1"]
        )
    )
    headers = {
        "Content-Type": content_type,
        "X-GitHub-Event": draw(st.sampled_from([event] * 6 + ["", "x" * 101, "unknown_event"])),
        "X-GitHub-Delivery": draw(st.uuids().map(str) | st.text(max_size=120)),
    }
    signature = draw(st.sampled_from(["good"] * 6 + ["none", "wrong", "malformed", "other-body"]))
    if signature == "good":
        headers["X-Hub-Signature-256"] = sign(secret, body)
    elif signature == "wrong":
        headers["X-Hub-Signature-256"] = sign("not-the-secret", body)
    elif signature == "malformed":
        headers["X-Hub-Signature-256"] = draw(st.text(max_size=80))
    elif signature == "other-body":
        headers["X-Hub-Signature-256"] = sign(secret, body + b" ")
    extra = draw(
        st.dictionaries(
            st.sampled_from(["X-GitHub-Hook-ID", "User-Agent", "X-Forwarded-For", "X-Extra"]),
            st.text(max_size=40),
            max_size=2,
        )
    )
    headers.update(extra)
    headers = {k: v for k, v in headers.items() if _header_ok(v)}
    return Case(body, headers, f"{label}/{signature}")


def _header_ok(value: str) -> bool:
    # What an HTTP client can send at all: latin-1, no line breaks.
    try:
        value.encode("latin-1")
    except UnicodeEncodeError:
        return False
    return "\n" not in value and "\r" not in value and "\x00" not in value


class LogWatch(logging.Handler):
    """Every log record at any level, from any logger, while installed."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def tracebacks(self) -> list[str]:
        found = []
        for r in self.records:
            text = r.getMessage()
            if r.exc_info or r.exc_text or "Traceback (most recent call last)" in text:
                found.append(f"{r.name}: {text}")
        return found


@contextmanager
def watching_logs() -> Iterator[LogWatch]:
    watch = LogWatch()
    root = logging.getLogger()
    old = root.level
    root.addHandler(watch)
    root.setLevel(logging.DEBUG)
    try:
        yield watch
    finally:
        root.removeHandler(watch)
        root.setLevel(old)


def stored(store: Store) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(deliveries)).scalar_one())


class Fuzzer:
    """Sends cases to the app and processes what it accepted, checking each."""

    def __init__(self, client: FlaskClient, store: Store) -> None:
        self.client = client
        self.store = store
        self.worker = DeliveryWorker(store, build_router(), WorkerConfig(retry_base_seconds=0))
        self.statuses: dict[int, int] = {}

    def check(self, case: Case) -> None:
        before = stored(self.store)
        delivery = case.headers.get("X-GitHub-Delivery", "")
        known = (
            bool(delivery) and len(delivery) <= 100 and self.store.inbox.get(delivery) is not None
        )
        resp = self.client.post("/webhooks", data=case.body, headers=case.headers)
        status = resp.status_code
        self.statuses[status] = self.statuses.get(status, 0) + 1
        assert status < 500, f"{case.label}: {status} {resp.get_data(as_text=True)[:200]}"
        if status >= 400 or status == 200:  # refused, or a ping
            assert stored(self.store) == before, f"{case.label}: stored a refused request"
            if delivery and len(delivery) <= 100 and not known:
                assert self.store.inbox.get(delivery) is None, case.label
        else:
            assert status == 202, case.label
            while self.worker.process_one() is not None:
                pass
