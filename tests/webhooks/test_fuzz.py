"""`/webhooks` under hostile input, on SQLite and PostgreSQL: no 5xx, no
traceback in the logs, nothing stored for a refused request (tests/webhooks/fuzz.py;
`make bench` runs the same cases 10,000 times)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from app.service_settings import Settings
from app.store import Store
from app.web.app import create_app
from tests.webhooks import oracle
from tests.webhooks.fuzz import Case, Examples, Fuzzer, cases, watching_logs

SECRET = "fuzz-secret"
# Small in `make test`; bench/bench_fuzz.py runs 10,000.
EXAMPLES = int(os.environ.get("ODW_FUZZ_EXAMPLES", "150"))
EXAMPLE_EVENTS = Examples(
    (e.event, e.as_app_delivery()) for e in oracle.examples(*oracle.ODW_EVENTS)
)


@pytest.fixture
def fuzzer(any_store: Store, tmp_path: Path) -> Fuzzer:
    oracle.require(*oracle.ODW_EVENTS)
    app = create_app(
        Settings(webhook_secret=SECRET, data_dir=tmp_path),  # type: ignore[arg-type]
        any_store,
    )
    return Fuzzer(app.test_client(), any_store)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(case=cases(SECRET, EXAMPLE_EVENTS))
def test_webhook_fuzz_no_5xx_no_traceback_nothing_stored_when_refused(
    fuzzer: Fuzzer, case: Case
) -> None:
    with watching_logs() as logs:
        fuzzer.check(case)
    assert logs.tracebacks() == [], case.label
