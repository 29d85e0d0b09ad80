"""A gate that fails twice, end to end against the fake GitHub: the person who
started the run gets a new comment that mentions them (an edit notifies
nobody), the failing check run's title says stage, attempt, cause and command
in about 100 characters, and a second stop hides the first notice as outdated
(GraphQL `minimizeComment`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.apphost.step import load_state
from app.core.run_view import task_view
from app.core.telling import telling_line
from app.core.titles import TITLE_BUDGET, command
from tests.apphost.harness import REPO, Service, explain, install_sample, sample_files, wait_until
from tests.commands_app.test_commands_e2e import ROADMAP, RUNS, run_id_of, task_status
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.actions_runner import LocalActions

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]

# `make test` fails the way a pytest suite does, and make wraps it (exit 2).
SAID = (
    "tests/test_greeting.py::test_greeting FAILED",
    "E       AssertionError: assert 1 == 2",
    "FAILED tests/test_greeting.py::test_greeting - AssertionError: assert 1 == 2",
    "========================= 1 failed, 3 passed in 0.05s =========================",
)
MAKEFILE = "test:\n" + "".join(f"\t@echo '{line}'\n" for line in SAID) + "\t@exit 1\n"
ODW = {
    "gates": ["make test"],
    "identity": {"name": "odw-runner", "email": "odw-runner@example.com"},
    # Budget 0: the second identical failure exhausts the gate, so it fails twice.
    "config": {"maxParallel": 1, "gateRetryBudget": 0, "assessPartialBranches": False},
}


@pytest.fixture
def sample(fake: FakeGitHub, service: Service) -> s.Repository:
    return install_sample(fake, service, {**sample_files(ROADMAP, ODW), "Makefile": MAKEFILE})


def notices(fake: FakeGitHub, number: int) -> list[s.Comment]:
    return sorted(
        (
            c
            for c in fake.comments.values()
            if c.number == number and c.body.startswith("<!-- odw:notice")
        ),
        key=lambda c: c.id,
    )


def test_a_gate_that_fails_twice_notifies_the_starter_with_a_title_that_says_what_to_type(
    fake: FakeGitHub,
    service: Service,
    sample: s.Repository,
    actions: LocalActions,
    agent_script: Path,
) -> None:
    agent_script.write_text("{}")
    fake.add_collaborator(REPO, "maintainer", "write")
    service.run_app(REPO, "--by", "maintainer")
    store = service.store()
    RUNS.pop(id(store), None)
    try:
        try:
            wait_until("1.1 to fail", lambda: task_status(store, "1.1") == "failed", timeout=240)
            pull = wait_until(
                "1.1's notice",
                lambda: next(
                    (
                        p
                        for p in fake.pulls.values()
                        if p.head == "roadmap-1-1" and notices(fake, p.number)
                    ),
                    None,
                ),
                timeout=60,
            )
        except AssertionError as e:
            raise AssertionError(f"{e}\n{explain(service, actions)}") from None
        run_id = run_id_of(store)
        assert run_id is not None
        state = load_state(store, run_id)
        t = state.task("1.1")
    finally:
        store.close()

    # The check run that failed: stage, attempt, cause (the telling line, not
    # make's last word) and the command, in one line of about 100 characters.
    check = max(
        (
            c
            for c in fake.check_runs.values()
            if c.name == "ODW · 1.1" and c.conclusion == "failure"
        ),
        key=lambda c: c.id,
    )
    title = check.output["title"]
    typed = command(task_view(state, t))
    assert title.startswith("failed at gates (attempt 2 of 2): make test exit 2: FAILED "), title
    assert title.endswith(f"; {typed}") and typed.startswith("/odw ") and " 1.1" in typed, title
    assert "make: ***" not in title and "\n" not in title
    assert len(title) <= TITLE_BUDGET, (len(title), title)
    # The check text carries the gate's output tail, telling line included.
    # The summary's stage table: the failed stage, its attempts, its time and a
    # link to its Actions job (not the workflow run).
    row = next(x for x in check.output["summary"].splitlines() if x.startswith("| implement"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:3] == ["failed: `make test` exit 2", "2"], row
    assert cells[3].endswith(("s", "m")) and "/job/" in cells[4], row
    assert check.details_url is not None and "/job/" in check.details_url
    told = telling_line("\n".join([*SAID, "make: *** [Makefile:6: test] Error 1"]))
    assert told == SAID[2]
    assert "<details>" in (check.output.get("text") or "") and told in check.output["text"]

    # One new comment that mentions the person who started the run, says what
    # failed in one line and gives the exact command.
    [notice] = notices(fake, pull.number)
    assert notice.user == fake.bot_login and notice.edits == 0
    second = notice.body.splitlines()[1]
    assert second.startswith("@maintainer **ODW · 1.1** failed at gates (attempt 2 of 2)")
    assert f"`{typed}`" in notice.body
    assert notice.minimized is None
    # The service log says it at INFO: the failure and who was notified.
    # (The worker logs once GitHub has answered, so the line may trail the comment.)
    notified = f"notified maintainer on pull request #{pull.number}: task 1.1"
    wait_until("the notice's log line", lambda: notified in service.log())
    said = service.log()
    assert "task 1.1 failed at implement: build gate budget exhausted" in said
    # It is posted once: later syncs (views after every step) leave it alone.
    assert sum(1 for c in fake.comments.values() if c.body.startswith("<!-- odw:notice")) == 1

    # The maintainer types the command; the gate fails the same way again: a
    # second notice, and the first is hidden as outdated, not deleted.
    fake.comment_as("maintainer", REPO, pull.number, typed)
    try:
        wait_until("a second notice", lambda: len(notices(fake, pull.number)) == 2, timeout=240)
        wait_until("the first hidden", lambda: notices(fake, pull.number)[0].minimized is not None)
    except AssertionError as e:
        raise AssertionError(f"{e}\n{explain(service, actions)}") from None
    first, newest = notices(fake, pull.number)
    assert first.id == notice.id and first.minimized == "outdated"
    assert newest.minimized is None and newest.body.splitlines()[1].startswith("@maintainer ")
    assert sum(1 for r in fake.requests if r["path"].endswith("/graphql")) == 1
