"""The fake's webhooks: valid against @octokit/webhooks-schemas, signed, and
accepted by ODW's own webhook endpoint; drops and duplicates on demand."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft7Validator
from werkzeug.serving import make_server

from app.github.client import RepositoryClient
from app.github.protocols import CheckAction, CheckRunFields
from app.service_settings import Settings
from app.store import Store
from app.web.app import create_app
from tests.fakegithub import FakeGitHub
from tests.fakegithub.oracles import WEBHOOK_EXAMPLES, WEBHOOK_SCHEMAS, require_oracle
from tests.fakegithub.state import Repository
from tests.github.conftest import REPO
from tests.service.live import free_port

SECRET = "fake-to-odw-secret"


@cache
def _definitions(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def schema_errors(event: str, action: str | None, payload: dict[str, Any]) -> list[str]:
    schema = _definitions(require_oracle(WEBHOOK_SCHEMAS))
    name = f"{event}${action or 'event'}"
    if name not in schema["definitions"]:
        return [f"no schema {name}"]
    validator = Draft7Validator({"$ref": f"#/definitions/{name}", **schema})
    return [
        f"{name} {'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in validator.iter_errors(payload)
    ][:5]


def _lifecycle(client: RepositoryClient, fake: FakeGitHub, repo: Repository) -> None:
    """One task's worth of GitHub traffic: every event ODW listens to."""
    base = repo.git.sha("refs/heads/main") or ""
    client.refs.create_branch("roadmap-1-1", base)
    head = repo.git.commit_files("roadmap-1-1", {"f.txt": "1"}, "work", parent=base)
    pull = client.pulls.create_pull("roadmap-1-1", "main", "1.1 First task", "body")
    client.pulls.update_pull(pull.number, body="updated")
    check = client.checks.create_check_run(
        "ODW · 1.1",
        head,
        CheckRunFields(
            status="in_progress", title="running", summary="s", external_id="e",
            actions=[CheckAction("Retry", "Run it again", "retry")],
        ),
    )  # fmt: skip
    fake.click_check_run_action(check.id, "retry", "octo")
    client.checks.update_check_run(check.id, CheckRunFields(conclusion="success"))
    comment = client.comments.create_comment(pull.number, "status")
    client.comments.edit_comment(comment.id, "status, edited")
    fake.comment_as("octo", REPO, pull.number, "/odw retry 1.1")
    inputs = {"stage": "plan", "task": "1.1", "token": "t1"}
    run = client.dispatch.dispatch("odw-stage.yml", "roadmap-1-1", inputs)
    fake.start_run(run.run_id)
    fake.complete_run(run.run_id, "success")
    fake.pulls[(REPO, pull.number)].draft = False
    client.pulls.merge_pull(pull.number, head)


EXPECTED = {
    ("installation", "created"), ("push", None), ("pull_request", "opened"),
    ("pull_request", "edited"), ("pull_request", "closed"), ("check_run", "created"),
    ("check_run", "requested_action"), ("check_run", "completed"),
    ("issue_comment", "created"), ("issue_comment", "edited"),
    ("workflow_run", "requested"), ("workflow_run", "in_progress"),
    ("workflow_run", "completed"), ("workflow_job", "in_progress"),
    ("workflow_job", "completed"),
}  # fmt: skip


def test_every_webhook_the_fake_sends_validates_against_githubs_schemas(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    require_oracle(WEBHOOK_EXAMPLES)
    _lifecycle(client, fake, repo)
    sent = {(d.event, d.action) for d in fake.webhooks.deliveries}
    assert sent >= EXPECTED
    problems = [
        problem
        for d in fake.webhooks.deliveries
        for problem in schema_errors(d.event, d.action, d.payload)
    ]
    assert "\n".join(problems) == ""
    foreign = sorted(
        {
            f"{key}={value}"
            for d in fake.webhooks.deliveries
            for key, value in _url_fields(d.payload)
            if not value.startswith(fake.host_url)
        }
    )
    assert foreign == []


def test_a_strangers_pull_requests_and_another_apps_check_run_look_as_on_github(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    """A fork's pull request has the fork as `head.repo`; a check run carries
    the App that created it; a person's pull request names that person. ODW's
    own lookup by head branch finds none of them."""
    require_oracle(WEBHOOK_EXAMPLES)
    base = repo.git.sha("refs/heads/main") or ""
    client.refs.create_branch("roadmap-1-1", base)
    repo.git.commit_files("roadmap-1-1", {"f.txt": "1"}, "work", parent=base)
    fork = fake.open_pull_as(
        "mallory", REPO, "roadmap-1-1", {"evil.sh": "x"}, from_fork="mallory/demo"
    )
    fake.close_pull_as("mallory", REPO, fork.number)
    merged = fake.open_pull_as(
        "mallory", REPO, "roadmap-1-1", {"e.sh": "x"}, from_fork="mallory/demo"
    )
    fake.merge_as("maintainer", REPO, merged.number)
    writer = fake.open_pull_as("writer", REPO, "roadmap-1-1", {"w.txt": "w"})
    fake.add_app(15368, "another-ci")
    head = repo.git.sha("refs/heads/main") or ""
    other = fake.create_check_run_as_app(
        15368, REPO, "ODW · 1.1", head, external_id="x/1.1",
        actions=[{"label": "Mark complete", "description": "d", "identifier": "complete"}],
    )  # fmt: skip
    fake.click_check_run_action(other.id, "complete", "writer")

    problems = [
        p for d in fake.webhooks.deliveries for p in schema_errors(d.event, d.action, d.payload)
    ]
    assert "\n".join(problems) == ""
    pulls = {
        (d.payload["number"], d.action): d.payload
        for d in fake.webhooks.deliveries
        if d.event == "pull_request"
    }
    for number in (fork.number, merged.number):
        head_repo = pulls[(number, "closed")]["pull_request"]["head"]["repo"]
        assert (head_repo["full_name"], head_repo["fork"]) == ("mallory/demo", True)
        assert head_repo["owner"]["login"] == "mallory" and head_repo["id"] != repo.id
        assert pulls[(number, "closed")]["pull_request"]["base"]["repo"]["full_name"] == REPO
    assert pulls[(fork.number, "closed")]["sender"]["login"] == "mallory"
    assert pulls[(merged.number, "closed")]["pull_request"]["merged_by"]["login"] == "maintainer"
    assert pulls[(writer.number, "opened")]["pull_request"]["user"]["login"] == "writer"
    assert pulls[(writer.number, "opened")]["pull_request"]["head"]["repo"]["full_name"] == REPO
    click = [d for d in fake.webhooks.deliveries if d.action == "requested_action"][-1]
    assert (click.payload["check_run"]["app"]["id"], click.payload["check_run"]["app"]["slug"]) == (
        15368,
        "another-ci",
    )
    # Over REST too: the fork is the head repository, the person the author.
    got = client.pulls.get_pull(fork.number)
    assert (got.head_repo, got.author) == ("mallory/demo", "mallory")
    assert client.pulls.get_pull(writer.number).author == "writer"
    # None of them is ODW's own pull request on the task branch.
    assert client.pulls.find_pull("roadmap-1-1", "main") is None
    client.refs.create_branch("roadmap-2-1", base)
    repo.git.commit_files("roadmap-2-1", {"g.txt": "2"}, "work", parent=base)
    mine = client.pulls.create_pull("roadmap-2-1", "main", "2.1", "body")
    assert client.pulls.find_pull("roadmap-2-1", "main") == mine


def _url_fields(node: Any) -> Iterator[tuple[str, str]]:
    """Every `url` / `*_url` field a client follows (avatars are images; an App's
    `external_url` is its homepage, chosen by its owner)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, str) and value.startswith("http"):
                if (key == "url" or key.endswith("_url")) and key not in (
                    "avatar_url",
                    "external_url",
                ):
                    yield key, value
            else:
                yield from _url_fields(value)
    elif isinstance(node, list):
        for value in node:
            yield from _url_fields(value)


@contextmanager
def endpoint(data_dir: Path) -> Iterator[tuple[str, Store]]:
    """ODW's real webhook endpoint, served on loopback, storing under `data_dir`."""
    data_dir.mkdir(parents=True, exist_ok=True)
    store = Store.open(f"sqlite:///{data_dir / 'odw.sqlite3'}")
    settings = Settings(webhook_secret=SECRET, data_dir=data_dir)  # type: ignore[arg-type]
    server = make_server("127.0.0.1", 0, create_app(settings, store), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/webhooks", store
    finally:
        server.shutdown()
        store.close()


@pytest.fixture
def odw(tmp_path: Path) -> Iterator[tuple[str, Store]]:
    with endpoint(tmp_path) as found:
        yield found


def test_signed_deliveries_are_accepted_by_odw_and_drops_and_duplicates_happen_on_demand(
    client: RepositoryClient,
    fake: FakeGitHub,
    repo: Repository,
    odw: tuple[str, Store],
) -> None:
    url, store = odw
    fake.webhooks.url, fake.webhooks.secret = url, SECRET
    fake.webhooks.drop_next(1)
    first = fake.comment_as("octo", REPO, fake.open_issue(REPO), "/odw status")
    fake.webhooks.duplicate_next(1)
    second = fake.comment_as("octo", REPO, fake.open_issue(REPO), "/odw help")
    fake.webhooks.flush()
    dropped, duplicated = fake.webhooks.deliveries[-2:]
    assert dropped.dropped and dropped.status is None
    assert duplicated.status == 202
    assert store.inbox.get(dropped.id) is None
    stored = store.inbox.get(duplicated.id)
    assert stored is not None and stored.event == "issue_comment"
    assert [json.loads(a)["status"] for a in duplicated.answers] == ["received", "duplicate"]
    assert (first.body, second.body) == ("/odw status", "/odw help")


def test_a_delivery_signed_with_another_secret_is_refused_by_odw(
    fake: FakeGitHub, repo: Repository, odw: tuple[str, Store]
) -> None:
    url, store = odw
    fake.webhooks.url, fake.webhooks.secret = url, "not-the-secret"
    fake.comment_as("octo", REPO, fake.open_issue(REPO), "/odw run")
    fake.webhooks.flush()
    (delivery,) = [d for d in fake.webhooks.deliveries if d.event == "issue_comment"]
    assert delivery.status == 401
    assert store.inbox.get(delivery.id) is None


def test_a_late_delivery_reaches_odw_after_the_next_of_its_event(
    client: RepositoryClient,
    fake: FakeGitHub,
    repo: Repository,
    odw: tuple[str, Store],
) -> None:
    """GitHub does not promise order: `completed` can arrive before `in_progress`
    (tests/fakegithub/README.md). Both are accepted, in the order they came."""
    url, store = odw
    fake.webhooks.url, fake.webhooks.secret = url, SECRET
    fake.webhooks.deliver_late("workflow_run", "in_progress")
    fake.webhooks.deliver_late("workflow_job", "in_progress")
    inputs = {"stage": "plan", "task": "1.1", "token": "t"}
    run = client.dispatch.dispatch("odw-stage.yml", "main", inputs)
    fake.start_run(run.run_id)
    fake.complete_run(run.run_id)
    fake.webhooks.flush()
    arrived = [
        (d.event, d.action) for d in fake.webhooks.delivered if d.event.startswith("workflow")
    ]
    assert arrived == [
        ("workflow_run", "requested"),
        ("workflow_job", "completed"),
        ("workflow_job", "in_progress"),
        ("workflow_run", "completed"),
        ("workflow_run", "in_progress"),
    ]
    assert all(d.status == 202 for d in fake.webhooks.delivered if d.event.startswith("workflow"))
    happened = [(d.event, d.action) for d in fake.webhooks.deliveries if d.event == "workflow_run"]
    assert happened == [
        ("workflow_run", "requested"),
        ("workflow_run", "in_progress"),
        ("workflow_run", "completed"),
    ]
    assert store.inbox.get(fake.webhooks.delivered[-1].id) is not None


def test_several_receivers_take_deliveries_in_turn_and_a_refusing_one_is_skipped(
    fake: FakeGitHub, repo: Repository, tmp_path: Path
) -> None:
    down = f"http://127.0.0.1:{free_port()}/webhooks"  # nothing listens: refused
    with endpoint(tmp_path / "a") as (a, store_a), endpoint(tmp_path / "b") as (b, store_b):
        fake.webhooks.secret = SECRET
        fake.webhooks.receivers([down, a, b])
        for n in range(4):
            fake.comment_as("octo", REPO, fake.open_issue(REPO), f"/odw help {n}")
        fake.webhooks.flush()
        sent = [d for d in fake.webhooks.delivered if d.event == "issue_comment"]
        assert [d.status for d in sent] == [202] * 4
        took = [
            "a" if store_a.inbox.get(d.id) else "b" if store_b.inbox.get(d.id) else "-"
            for d in sent
        ]
        # Turns: down (refused, so a), a, b, down again (so a).
        assert took == ["a", "a", "b", "a"]


def test_failed_deliveries_are_redelivered_with_their_ids(
    fake: FakeGitHub, repo: Repository, odw: tuple[str, Store]
) -> None:
    url, store = odw
    fake.webhooks.secret = SECRET
    fake.webhooks.receivers([f"http://127.0.0.1:{free_port()}/webhooks"])
    fake.comment_as("octo", REPO, fake.open_issue(REPO), "/odw help")
    fake.webhooks.flush()
    (failed,) = [d for d in fake.webhooks.delivered if d.event == "issue_comment"]
    assert failed.status == 0 and store.inbox.get(failed.id) is None
    fake.webhooks.receivers([url])
    assert fake.webhooks.redeliver_failed() >= 1
    fake.webhooks.flush()
    assert failed.status == 202
    assert store.inbox.get(failed.id) is not None
    assert fake.webhooks.redeliver_failed() == 0
