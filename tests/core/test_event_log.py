"""Events round-trip through plain JSON; unknown types and versions fail loudly."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from app.core.events import IntegrationRecorded, ReplayError, event_from_json, event_to_json
from app.core.integration import IntegrationReport
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


def test_an_integration_report_keeps_its_camel_case_json_inside_an_event():
    """The report is a plain dataclass; events store and read it as they always did."""
    report = IntegrationReport(
        ok=True, rebased=True, squash_merged=True, pushed=False, roadmap_marked_done=True,
        attempts=2, sha="abc1234", summary="push failed",
    )  # fmt: skip
    event = IntegrationRecorded(at=datetime(2026, 1, 1, tzinfo=UTC), task="1.2.3", report=report)
    data = json.loads(json.dumps(event_to_json(event)))
    assert data["report"] == report.model_dump(by_alias=True) == {
        "ok": True, "rebased": True, "squashMerged": True, "pushed": False,
        "roadmapMarkedDone": True, "attempts": 2, "sha": "abc1234", "conflicts": None,
        "summary": "push failed",
    }  # fmt: skip
    assert event_from_json(data) == event
    snake = {**data, "report": {"ok": True, "squash_merged": True, "attempts": 1}}
    read = event_from_json(snake)
    assert isinstance(read, IntegrationRecorded) and read.report is not None
    assert read.report.squash_merged and not read.report.complete
    with pytest.raises(ReplayError, match=r"report\.ok"):
        event_from_json({**data, "report": {"ok": "maybe"}})
