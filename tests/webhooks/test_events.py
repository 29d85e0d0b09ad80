from __future__ import annotations

import json

import pytest

from tests.webhooks import oracle
from webhooks.payloads import (
    EVENT_TYPES,
    CheckRunEvent,
    GitHubEvent,
    IssueCommentEvent,
    PayloadError,
    PullRequestEvent,
    PushEvent,
    UnknownEvent,
    WorkflowJobEvent,
    WorkflowRunEvent,
    parse_event,
    parse_event_json,
)
from webhooks.router import Router


@pytest.mark.parametrize("example", oracle.params(*oracle.ODW_EVENTS))
def test_every_published_example_parses_into_its_typed_event(example: oracle.Example) -> None:
    payload = example.payload
    event = parse_event(example.event, payload)
    assert type(event) is EVENT_TYPES[example.event]
    assert event.action == payload.get("action")
    assert event.repo == (payload.get("repository") or {}).get("full_name")
    assert event.subject()
    if isinstance(event, PushEvent):
        assert (event.ref, event.after) == (payload["ref"], payload["after"])
    if isinstance(event, PullRequestEvent):
        assert event.pull_request.head.sha == payload["pull_request"]["head"]["sha"]
    if isinstance(event, IssueCommentEvent):
        assert event.comment.body == payload["comment"]["body"]
        assert event.on_pull_request == ("pull_request" in payload["issue"])
    if isinstance(event, CheckRunEvent):
        assert event.check_run.head_sha == payload["check_run"]["head_sha"]
    if isinstance(event, WorkflowRunEvent):
        assert event.workflow_run.conclusion == payload["workflow_run"]["conclusion"]
    if isinstance(event, WorkflowJobEvent):
        assert event.workflow_job.run_id == payload["workflow_job"]["run_id"]


@pytest.mark.parametrize("example", oracle.params(*oracle.ODW_EVENTS))
def test_the_worker_reads_stored_json_into_the_same_event(example: oracle.Example) -> None:
    body = json.dumps(example.payload).encode()
    assert parse_event_json(example.event, body) == parse_event(example.event, example.payload)


def test_a_payload_missing_a_typed_field_is_a_clear_error() -> None:
    with pytest.raises(
        PayloadError,
        match=r"pull_request payload: number: Field required; pull_request: Field required",
    ):
        parse_event("pull_request", {"action": "opened"})


@pytest.mark.parametrize(
    ("installation_id", "problem"),
    [("123", "valid integer"), (True, "valid integer"), (1.0, "valid integer")],
    ids=["string", "boolean", "float"],
)
def test_typed_fields_take_one_json_type_only(installation_id: object, problem: str) -> None:
    """No coercion: "123" or true is not installation 123 or 1 in the worker
    either (the edge refuses them first; rows stored before it are failed)."""
    payload = {"action": "created", "installation": {"id": installation_id}}
    with pytest.raises(PayloadError, match=rf"installation\.id: Input should be a {problem}"):
        parse_event("installation", payload)
    with pytest.raises(PayloadError, match=r"installation\.id"):
        parse_event("star", payload)


def test_events_odw_does_not_model_parse_generically() -> None:
    event = parse_event("star", {"action": "created", "installation": {"id": 5}})
    assert isinstance(event, UnknownEvent)
    assert event.installation_id == 5


def test_routers_combine_and_match_event_and_action() -> None:
    a, b = Router(), Router()
    seen: list[str] = []

    @a.register("pull_request")
    def any_action(event: GitHubEvent) -> None:
        seen.append("any")

    @b.register("pull_request", action="closed")
    def closed(event: GitHubEvent) -> None:
        seen.append("closed")

    combined = Router(a, b)
    assert combined.handlers_for("pull_request", "closed") == [any_action, closed]
    assert combined.handlers_for("pull_request", "opened") == [any_action]
    assert combined.handlers_for("push", None) == []
    assert combined.events() == {"pull_request"}
