"""Commands end to end: the fake GitHub's `issue_comment` and `check_run`
deliveries (GitHub's published examples with our bodies written over them)
reach `odw serve`, which answers on the fake GitHub and steers the run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from app.apphost.runs import RunKey, find_open
from app.apphost.step import load_state
from app.commands.grammar import help_text
from app.store import Store
from tests.apphost.harness import REPO, Service, explain, wait_until
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.actions_runner import LocalActions
from tests.rendering import renders_as_text

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]

ROADMAP = """\
# Roadmap

## 1. Demo

- [ ] 1.1. Add a greeting
  - Success: `work/1-1.txt` exists.
- [ ] 1.2. Add a farewell
  - Requires 1.1.
"""
ODW = {
    "gates": ["test -d work"],
    "identity": {"name": "odw-runner", "email": "odw-runner@example.com"},
    "config": {"maxParallel": 1, "assessPartialBranches": False},
}
# 1.1's implement stage exits 3 without the completion marker once: the task
# fails with its plan committed (so its pull request exists); the next attempt passes.
SCRIPT = {"1.1": {"implement": ["exit:3"]}}


@pytest.fixture
def sample_spec() -> dict[str, Any]:
    return {"roadmap": ROADMAP, "odw": ODW}


@pytest.fixture
def failed(
    fake: FakeGitHub,
    service: Service,
    sample: s.Repository,
    actions: LocalActions,
    agent_script: Any,
) -> Iterator[Store]:
    """A run whose task 1.1 failed at implement; the maintainer and a reader exist."""
    agent_script.write_text(json.dumps(SCRIPT))
    fake.add_collaborator(REPO, "maintainer", "write")
    fake.add_collaborator(REPO, "reader", "read")
    service.run_app()
    store = service.store()
    RUNS.pop(id(store), None)
    try:
        wait_until("1.1 to fail", lambda: task_status(store, "1.1") == "failed", timeout=180)
        yield store
    finally:
        store.close()


RUNS: dict[int, str] = {}  # id(store) -> the run under test (it stays readable after it ends)


def run_id_of(store: Store) -> str | None:
    if id(store) not in RUNS:
        found = find_open(store, RunKey(installation_of(store), REPO, "main"))
        if found is None:
            return None
        RUNS[id(store)] = found
    return RUNS[id(store)]


def run_state(store: Store) -> Any:
    run_id = run_id_of(store)
    return load_state(store, run_id) if run_id else None


def installation_of(store: Store) -> int:
    found = store.installations.installation_for_repository(REPO)
    assert found is not None
    return found


def task_status(store: Store, task: str) -> str | None:
    state = run_state(store)
    t = state.tasks.get(task) if state else None
    return t.status if t else None


def events_of(store: Store, kind: str) -> list[dict[str, Any]]:
    run_id = run_id_of(store)
    assert run_id is not None
    return [e for e in store.events.load(run_id) if e["type"] == kind]


def replies(fake: FakeGitHub, number: int) -> list[s.Comment]:
    return [
        c
        for c in sorted(fake.comments.values(), key=lambda c: c.id)
        if c.number == number
        and c.user == fake.bot_login
        and c.body.startswith(("<!-- odw:reply", "<!-- odw:click"))
    ]


# A delivery's final statuses: handled, not for ODW, given up on, refused as malformed.
FINAL = ("processed", "ignored", "failed", "rejected")


def settled(store: Store, delivery: s.Delivery) -> bool:
    """The service stored the delivery and its handler (and any command) finished."""
    row = store.inbox.get(delivery.id)
    if row is None or row.status not in FINAL:
        return False
    pending = [e for e in store.outbox.list() if e.kind == "app-command" and e.status != "done"]
    return not pending


def last_delivery(fake: FakeGitHub, event: str) -> s.Delivery:
    return [d for d in fake.webhooks.deliveries if d.event == event][-1]


def test_comments_steer_a_run_once_and_only_from_people_allowed(
    fake: FakeGitHub,
    service: Service,
    sample: s.Repository,
    actions: LocalActions,
    failed: Store,
) -> None:
    store = failed
    pull = wait_until(
        "1.1's pull request",
        lambda: next((p for p in fake.pulls.values() if p.head == "roadmap-1-1"), None),
    )
    number = pull.number

    # A bot not in allowedBots: ignored without a word.
    bot = fake.add_comment(REPO, number, "/odw retry", "renovate[bot]", "Bot")
    wait_until("the bot's delivery", lambda: settled(store, last_delivery(fake, "issue_comment")))
    # Quoted and fenced commands are not commands.
    quoted = fake.comment_as(
        "maintainer", REPO, number, "> /odw retry 1.1\n\n```\n/odw retry 1.1\n```\n"
    )
    wait_until("the quote's delivery", lambda: settled(store, last_delivery(fake, "issue_comment")))
    assert bot.reactions == [] and quoted.reactions == []
    assert replies(fake, number) == []
    assert events_of(store, "task-retried") == []

    # A read-only user is refused once, naming the level needed; nothing changes.
    refused = fake.comment_as("reader", REPO, number, "/odw retry\n/odw rearm stageAttempts=3")
    wait_until("the refusal", lambda: len(replies(fake, number)) == 1)
    text = replies(fake, number)[0].body
    assert "> `/odw retry" in text and "`write`" in text and "`read`" in text
    assert text.count("needs `write`") == 1, text
    assert (fake.bot_login, "eyes") in refused.reactions
    assert (fake.bot_login, "confused") in refused.reactions
    assert task_status(store, "1.1") == "failed"

    # The maintainer's retry, delivered twice, is applied once and answered once.
    kept_head = sample.git.refs()["refs/heads/roadmap-1-1"]
    fake.webhooks.duplicate_next()
    asked = fake.comment_as("maintainer", REPO, number, "please\n/odw retry")
    wait_until("the answer", lambda: len(replies(fake, number)) == 2)
    wait_until("both copies", lambda: settled(store, last_delivery(fake, "issue_comment")))
    answer = replies(fake, number)[1].body
    assert "> `/odw retry" in answer
    assert (
        "restarting 1.1 from plan on a fresh `roadmap-1-1` from the tip of `main`; "
        "the previous attempts are kept on `odw-kept/roadmap-1-1/retry-1`"
    ) in answer
    assert "[run check](" in answer and "[task pull request](" in answer
    assert (fake.bot_login, "eyes") in asked.reactions
    assert len(events_of(store, "task-retried")) == 1
    # Editing the comment runs nothing.
    asked.body = "/odw halt"
    fake.webhooks.send("issue_comment", "edited", comment=asked)
    wait_until("the edit's delivery", lambda: settled(store, last_delivery(fake, "issue_comment")))
    assert events_of(store, "run-halted") == []

    try:
        wait_until(
            "both tasks to land",
            lambda: task_status(store, "1.1") == "landed" and task_status(store, "1.2") == "landed",
            timeout=240,
        )
    except AssertionError as e:
        raise AssertionError(f"{e}\n{explain(service, actions)}") from None
    assert len(events_of(store, "task-retried")) == 1
    assert len(replies(fake, number)) == 2
    # The retry started over on a fresh branch (plan ran again) and the earlier
    # work is where the reply said; the task's pull request stayed open (a pull
    # request GitHub closed would have stopped the task, not landed it).
    assert sample.git.refs()["refs/heads/odw-kept/roadmap-1-1/retry-1"] == kept_head
    plans = [e for e in events_of(store, "stage-dispatched") if e["task"] == "1.1"]
    assert [e["stage"] for e in plans].count("plan") == 2


def test_help_on_an_issue_is_the_grammar_table(
    fake: FakeGitHub,
    service: Service,
    sample: s.Repository,
) -> None:
    number = fake.open_issue(REPO)
    fake.comment_as("octo", REPO, number, "/odw help\n/odw retyr 1.2")
    wait_until("the help", lambda: replies(fake, number))
    body = replies(fake, number)[0].body
    assert help_text() in body
    assert "did you mean `retry`? Usage: `/odw retry ID`" in body
    [said] = [line for line in body.splitlines() if "did you mean" in line]
    assert "?." not in said and ".." not in said, said


def test_the_retry_button_reruns_a_failed_task_for_a_writer_only(
    fake: FakeGitHub,
    service: Service,
    sample: s.Repository,
    failed: Store,
) -> None:
    store = failed

    def failed_check() -> s.CheckRun | None:
        runs = [c for c in fake.check_runs.values() if c.name == "ODW · 1.1"]
        last = runs[-1] if runs else None
        ok = last and last.conclusion == "failure" and last.actions
        return last if ok else None

    check = wait_until("1.1's failed check run with buttons", failed_check)
    # A product failure (implement exited 3): continuing the kept work comes first.
    assert [a["identifier"] for a in check.actions] == ["recover", "retry", "complete"]
    assert [a["label"] for a in check.actions] == ["Continue", "Start over", "Mark complete"]
    pull = next(p for p in fake.pulls.values() if p.head == "roadmap-1-1")

    fake.click_check_run_action(check.id, "retry", "reader")
    wait_until("the refusal", lambda: replies(fake, pull.number))
    assert "needs `write`" in replies(fake, pull.number)[0].body
    assert events_of(store, "task-retried") == []

    fake.click_check_run_action(check.id, "retry", "maintainer")
    wait_until("the retry", lambda: events_of(store, "task-retried"))
    assert events_of(store, "task-retried")[0]["by"] == "maintainer"
    wait_until("1.1 to land", lambda: task_status(store, "1.1") == "landed", timeout=240)


def test_a_click_on_a_check_run_odw_never_created_runs_nothing(
    fake: FakeGitHub,
    service: Service,
    sample: s.Repository,
    failed: Store,
) -> None:
    """Another App's check run named like 1.1's, with 1.1's external id copied,
    and a check run of ODW's App whose external id names no live run: clicking
    "Mark complete" on either runs nothing and answers nothing; the button on
    1.1's own check run still works."""
    store = failed

    def failed_check() -> s.CheckRun | None:
        runs = [c for c in fake.check_runs.values() if c.name == "ODW · 1.1"]
        last = runs[-1] if runs else None
        return last if last and last.conclusion == "failure" and last.actions else None

    check = wait_until("1.1's failed check run with buttons", failed_check)
    pull = next(p for p in fake.pulls.values() if p.head == "roadmap-1-1")
    button = [a for a in check.actions if a["identifier"] == "complete"]
    fake.add_app(15368, "another-ci")
    foreign = fake.create_check_run_as_app(
        15368, REPO, check.name, check.head_sha, external_id=check.external_id, actions=button
    )
    stale = fake.create_check_run_as_app(
        fake.app_id, REPO, check.name, check.head_sha,
        external_id="gh-octo-demo-main-20260101T000000Z-000000/1.1", actions=button,
    )  # fmt: skip
    for clicked in (foreign, stale):
        fake.click_check_run_action(clicked.id, "complete", "maintainer")
        delivery = last_delivery(fake, "check_run")
        wait_until("the click's delivery", lambda: settled(store, delivery))  # noqa: B023
    assert events_of(store, "stage-completed-manually") == []
    assert task_status(store, "1.1") == "failed"
    assert replies(fake, pull.number) == []
    wait_until(
        "both clicks to be logged as ignored",
        lambda: service.log().count("click ignored") == 2,
        timeout=30,
    )
    log = service.log()
    assert "created by App 15368, not by ODW" in log and "does not name task 1.1" in log

    fake.click_check_run_action(check.id, "retry", "maintainer")
    wait_until("the retry", lambda: events_of(store, "task-retried"))
    assert events_of(store, "task-retried")[0]["by"] == "maintainer"
    # The reply is an outbox effect performed after the event is stored.
    wait_until("the click's one reply", lambda: replies(fake, pull.number))
    assert len(replies(fake, pull.number)) == 1


def test_a_strangers_long_hostile_comment_gets_one_capped_inert_reply(
    fake: FakeGitHub,
    service: Service,
    sample: s.Repository,
) -> None:
    number = fake.open_issue(REPO)
    line = (
        "/odw retry 1.1 ![p](https://t.example/p.gif) <img src=https://t.example/q.gif> "
        "&#64;org/team @admin [x](https://evil.example) <!-- odw:reply 1 --> Fixes #3 "
    )
    comment = "\n".join(f"{line}{i} {'x' * 150}" for i in range(300))
    assert len(comment) > 90_000
    fake.comment_as("mallory", REPO, number, comment)
    wait_until("the reply", lambda: replies(fake, number), timeout=120)
    [reply] = replies(fake, number)
    assert len(reply.body) <= 65_536 and "cut by ODW" in reply.body
    marker = reply.body.splitlines()[0]
    own = reply.body.replace(marker, "").replace("@mallory", "")
    assert "<!--" not in own
    assert renders_as_text(own, allowed_tags=("sub",)) == []
