"""The App on a base that refuses pushes (branch protection): every task of a
3-task run lands through a pull request, one squash merge each."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from tests.apphost.harness import ODW_YML, REPO, Service, wait_until
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.actions_runner import LocalActions

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]

ROADMAP = """\
# Roadmap

## 1. Demo

- [ ] 1.1. Add a greeting
- [ ] 1.2. Add a farewell
  - Requires 1.1.
- [ ] 1.3. Add a licence note
"""


@pytest.fixture
def sample_spec() -> dict[str, Any]:
    return {"roadmap": ROADMAP, "odw": ODW_YML}


def trailers(repo: s.Repository) -> Counter[str]:
    log = repo.git.git("log", "--format=%B%x1e", "refs/heads/main")
    return Counter(re.findall(r"^ODW-Task: (\S+)$", log, re.MULTILINE))


def test_a_protected_base_lands_every_task_through_pull_requests(
    fake: FakeGitHub, service: Service, sample: s.Repository, actions: LocalActions
) -> None:
    fake.protect_branch(REPO, "main")
    service.run_app()
    wait_until(
        "three landings", lambda: set(trailers(sample)) == {"1.1", "1.2", "1.3"}, timeout=300
    )
    assert trailers(sample) == Counter({"1.1": 1, "1.2": 1, "1.3": 1})

    def merge_requests() -> list[dict[str, Any]]:
        return [r for r in fake.requests if r["method"] == "PUT" and r["path"].endswith("/merge")]

    # The fake logs a request once its answer is ready, a moment after the merge
    # itself is visible in git: wait for the third entry, then count them all.
    wait_until("three merge requests logged", lambda: len(merge_requests()) >= 3, timeout=30)
    merges = merge_requests()
    assert len(merges) == 3 and all(r["body"]["merge_method"] == "squash" for r in merges)
    assert all(r["status"] == 200 for r in merges)
    # The push method was refused by the protection once, then not tried again.
    subjects = sample.git.git("log", "--format=%s", "refs/heads/main").splitlines()
    assert len(subjects) == 4  # three squash merges on the initial commit
    run_check = wait_until(
        "the run check's note",
        lambda: next(
            (
                c
                for c in reversed(list(fake.check_runs.values()))
                if c.name == "ODW · run" and "Branch protection refused" in c.output["summary"]
            ),
            None,
        ),
    )
    assert run_check.output["summary"].count("Branch protection refused a push") == 1
