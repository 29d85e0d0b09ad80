"""`auto: true`: a push to the default branch that changes the roadmap starts a run."""

from __future__ import annotations

from typing import Any

import pytest

from tests.apphost.harness import ODW_YML, Service, results, trailers, wait_until
from tests.fakegithub import FakeGitHub
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.state import Repository

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]

EMPTY = "# Roadmap\n\n- [x] 0.1. Done already\n"


@pytest.fixture
def sample_spec() -> dict[str, Any]:
    return {"roadmap": EMPTY, "odw": {**ODW_YML, "auto": True}}


def push(fake: FakeGitHub, repo: Repository, files: dict[str, str], message: str) -> str:
    """A person pushes a commit to main (the fake sends the push webhook)."""
    before = repo.git.sha("refs/heads/main")
    after = repo.git.commit_files("main", files, message, parent=before)
    fake.webhooks.send("push", None, repo=repo, ref="refs/heads/main", before=before, after=after)
    return after


def test_a_push_changing_the_roadmap_starts_a_run_and_other_pushes_do_not(
    fake: FakeGitHub, service: Service, sample: Repository, actions: LocalActions
) -> None:
    push(fake, sample, {"README.md": "# demo, edited\n"}, "docs: readme")
    service.wait_settled()
    assert service.runs() == []  # the roadmap did not change: nothing starts
    roadmap = EMPTY + "- [ ] 0.2. Add a greeting\n"
    push(fake, sample, {"docs/roadmap.md": roadmap}, "roadmap: add 0.2")
    wait_until("0.2 to land", lambda: trailers(sample) == ["0.2"], timeout=180)
    wait_until("the run to finish", lambda: service.runs()[0]["status"] == "finished")
    assert results(service)["0.2"]["status"] == "landed"
    # ODW's own landing push does not start another run.
    landed = sample.git.sha("refs/heads/main")
    wait_until(
        "the landing push's delivery",
        lambda: any(
            d.event == "push" and d.payload.get("after") == landed for d in fake.webhooks.deliveries
        ),
    )
    service.wait_settled()
    assert len(service.runs()) == 1
