"""The `/webhooks` fuzz at 10,000 cases (tests/webhooks/fuzz.py), on SQLite and
PostgreSQL (ODW_TEST_DATABASE_URL, else the local default, when it answers).
Prints the cases run, the answers by status and the cases per second beside
the baseline: the same number of well-formed signed deliveries through the
same app in the same run.
Any 5xx, traceback or stored refusal stops it with the failing case."""

from __future__ import annotations

import json
import os
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from hypothesis import HealthCheck, given, settings

from app.service_settings import Settings
from app.store import Store
from app.web.app import create_app
from bench.support import postgres_url
from tests.store.databases import postgres_schema_url
from tests.webhooks import oracle
from tests.webhooks.fuzz import Case, Examples, Fuzzer, cases, watching_logs
from webhooks.signature import sign

SECRET = "bench-fuzz-secret"  # noqa: S105 (a test secret for a throwaway app)
CASES = int(os.environ.get("ODW_FUZZ_EXAMPLES", "10000"))


@contextmanager
def _store(kind: str, tmp: Path) -> Iterator[Store]:
    if kind == "sqlite":
        store = Store.open(f"sqlite:///{tmp / 'fuzz.sqlite3'}")
        yield store
        store.close()
        return
    with postgres_schema_url() as url:
        store = Store.open(url)
        yield store
        store.close()


def _fuzzer(store: Store, tmp: Path) -> Fuzzer:
    app = create_app(Settings(webhook_secret=SECRET, data_dir=tmp), store)  # type: ignore[arg-type]
    return Fuzzer(app.test_client(), store)


def _baseline(fuzzer: Fuzzer, examples: list[tuple[str, dict]], n: int) -> float:
    started = time.perf_counter()
    for i in range(n):
        event, payload = examples[i % len(examples)]
        body = json.dumps(payload).encode()
        headers = {
            "Content-Type": "application/json",
            "X-GitHub-Event": event,
            "X-GitHub-Delivery": str(uuid.uuid4()),
            "X-Hub-Signature-256": sign(SECRET, body),
        }
        fuzzer.check(Case(body, headers, "baseline"))
    return n / (time.perf_counter() - started)


def _fuzz(fuzzer: Fuzzer, examples: list[tuple[str, dict]], n: int) -> float:
    @settings(
        max_examples=n,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=cases(SECRET, examples))
    def run(case: Case) -> None:
        with watching_logs() as logs:
            fuzzer.check(case)
        assert logs.tracebacks() == [], case.label

    started = time.perf_counter()
    run()
    return sum(fuzzer.statuses.values()) / (time.perf_counter() - started)


def main() -> None:
    examples = Examples((e.event, e.as_app_delivery()) for e in oracle.examples(*oracle.ODW_EVENTS))
    if not examples:
        print("skipped: GitHub's webhook examples are not installed (`make oracles`)")
        return
    kinds = ["sqlite"] + (["postgres"] if postgres_url() else [])
    for kind in kinds:
        with tempfile.TemporaryDirectory() as tmp_dir, _store(kind, Path(tmp_dir)) as store:
            tmp = Path(tmp_dir)
            fuzz = _fuzzer(store, tmp)
            rate = _fuzz(fuzz, examples, CASES)
            statuses = ", ".join(f"{s}: {n}" for s, n in sorted(fuzz.statuses.items()))
            base = _baseline(_fuzzer(store, tmp), examples, min(CASES, 2000))
            print(f"{kind}: {sum(fuzz.statuses.values())} fuzz cases, no 5xx, no traceback, "
                  f"nothing stored when refused ({statuses})")  # fmt: skip
            print(f"{kind}: {rate:,.0f} fuzz cases/s  "
                  f"(baseline: {base:,.0f} well-formed deliveries/s)")  # fmt: skip
    if "postgres" not in kinds:
        print("postgres: skipped (no PostgreSQL answers: set ODW_TEST_DATABASE_URL)")


if __name__ == "__main__":
    main()
