"""The App end to end against the fake GitHub: a roadmap run to landed, from GitHub's side."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.apphost.harness import Service, explain, trailers, wait_until
from tests.fakegithub import FakeGitHub
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.state import Repository

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]

TASKS = ("1.1", "1.2", "1.3", "1.4")


def checks_named(fake: FakeGitHub, name: str) -> list:
    return [c for c in fake.check_runs.values() if c.name == name]


def test_a_roadmap_with_a_dependency_chain_lands_end_to_end(
    fake: FakeGitHub, service: Service, sample: Repository, actions: LocalActions
) -> None:
    print(service.run_app())
    wait_until(
        "every task to land",
        lambda: set(trailers(sample)) == set(TASKS) or _stopped(service),
        timeout=300,
    )
    assert Counter(trailers(sample)) == Counter(dict.fromkeys(TASKS, 1)), explain(service, actions)
    roadmap = (sample.git.show("refs/heads/main", "docs/roadmap.md") or b"").decode()
    for task in TASKS:
        assert f"- [x] {task}." in roadmap
    wait_until("the run to finish", lambda: all(r["status"] == "finished" for r in service.runs()))
    # check runs: one per task with success, the run check a success
    run_checks = checks_named(fake, "ODW · run")
    assert run_checks and run_checks[-1].conclusion == "success"
    for task in TASKS:
        final = checks_named(fake, f"ODW · {task}")
        assert final and final[-1].conclusion == "success", task
        assert "/actions/runs/" in (final[-1].details_url or "")  # the last stage's run
        # A new check run on each new head; the older ones are not PATCHed to
        # `cancelled` (GitHub shows only the head's checks on the pull request).
        assert len({c.head_sha for c in final}) == len(final)
        assert final[-1].status == "completed"
        assert not [c for c in final if c.conclusion == "cancelled"]
    # one status comment per PR, edited in place; each PR closed with the squash link
    pulls = [p for p in fake.pulls.values() if p.head.startswith("roadmap-")]
    assert len(pulls) == len(TASKS)
    for pull in pulls:
        assert pull.state == "closed"
        mine = [c for c in fake.comments.values() if c.number == pull.number]
        assert len(mine) == 1, [c.body[:60] for c in mine]
        assert mine[0].edits >= 1  # progress was edited in place, not posted anew
        assert "Landed" in mine[0].body and "/commit/" in mine[0].body
        assert "closed, not merged" in mine[0].body
        assert "**Status:** landed as " in mine[0].body  # its commit, not "at integrate"
    # The service log has an INFO line for each landing, with its commit.
    said = (service.data_dir / "serve.log").read_text("utf-8", "replace")
    for task in TASKS:
        assert f"task {task} landed as " in said, task


def _stopped(service: Service) -> bool:
    runs = service.runs()
    return any((r.get("result") or {}).get("halted") for r in runs)
