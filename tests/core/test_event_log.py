"""Events round-trip through plain JSON; unknown types and versions fail loudly."""

from __future__ import annotations

import json

import pytest

from app.core.events import ReplayError, event_from_json, event_to_json
from app.core.state import fold
from tests.core.runkit import Run


def _run() -> Run:
    run = Run(maxParallel=2)
    run.drive_to("1.1.1", "implement")
    run.finish("1.1.1", "gate:build:boom")
    run.finish("1.1.1", "crash")
    run.finish("1.2.1", "no-marker")
    return run


def test_every_event_round_trips_through_plain_json():
    run = _run()
    for e in run.events:
        data = json.loads(json.dumps(event_to_json(e)))
        assert data["type"] == e.type and data["version"] == 1
        assert event_from_json(data) == e


def test_replaying_the_log_reproduces_the_state():
    run = _run()
    rows = [json.loads(json.dumps(event_to_json(e))) for e in run.events]
    assert fold(event_from_json(r) for r in rows) == run.state


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: {**d, "type": "task-exploded"}, "unknown event type 'task-exploded'"),
        (lambda d: {**d, "version": 2}, "unknown version 2"),
        (lambda d: {k: v for k, v in d.items() if k != "version"}, "unknown version None"),
        (lambda d: {**d, "runId": 7}, "malformed"),
        (lambda d: [d], "not an object"),
    ],
    ids=["type", "version", "no-version", "bad-field", "not-object"],
)
def test_unreadable_entries_fail_replay_loudly(mutate, message):
    first = event_to_json(_run().events[0])
    with pytest.raises(ReplayError, match=message):
        event_from_json(mutate(first))
