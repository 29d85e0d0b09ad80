"""What counts as ODW's own: a task's pull request, and a task's check run clicked."""

from __future__ import annotations

import pytest

from app.core.ownership import (
    CheckFacts,
    PullFacts,
    foreign_click,
    foreign_pull,
    foreign_pull_event,
    task_check_id,
)

REPO = "octo/demo"
BRANCH = "roadmap-1-1"
BOT = "odw[bot]"
APP = 424242
RUN = "gh-octo-demo-main-20261203T000000Z-abc123"


def pull(
    number: int = 7,
    head_ref: str = BRANCH,
    head_repo: str | None = REPO,
    author: str | None = BOT,
) -> PullFacts:
    return PullFacts(number, head_ref, head_repo, author)


@pytest.mark.parametrize(
    ("facts", "recorded", "why"),
    [
        (pull(), 7, None),
        (pull(head_repo="Octo/Demo"), 7, None),  # GitHub names are case-insensitive
        (pull(head_repo="mallory/demo"), 7, "comes from mallory/demo"),
        (pull(head_repo=None), 7, "deleted fork"),
        (pull(head_ref="roadmap-1-2"), 7, "is not the task branch"),
        (pull(number=8), 7, "is not the task's pull request #7"),
        (pull(), None, "recorded no pull request"),
        # A stranger's pull request never counts, even one ODW did not open itself
        # on the task branch of the repository: only the number recorded does.
        (pull(number=9, author="mallory"), 7, "is not the task's pull request #7"),
    ],
    ids=[
        "the-recorded-one", "case-insensitive-repo", "fork", "deleted-fork", "other-branch",
        "other-number", "none-recorded", "stranger-same-repo",
    ],
)  # fmt: skip
def test_a_pull_request_event_counts_only_for_the_recorded_pull_request(
    facts: PullFacts, recorded: int | None, why: str | None
) -> None:
    found = foreign_pull_event(facts, repository=REPO, task_branch=BRANCH, recorded=recorded)
    if why is None:
        assert found is None
    else:
        assert found is not None and why in found


@pytest.mark.parametrize(
    ("facts", "why"),
    [
        (pull(), None),
        (pull(author="ODW[bot]"), None),  # logins are case-insensitive
        (pull(author="maintainer"), "opened by maintainer, not odw[bot]"),
        (pull(author=None), "opened by someone unknown"),
        (pull(head_repo="mallory/demo"), "comes from mallory/demo"),
        (pull(head_repo=None), "deleted fork"),
        (pull(head_ref="roadmap-1-1-addendum"), "is not 'roadmap-1-1'"),
    ],
    ids=["odws-own", "case-insensitive-login", "a-person", "no-author", "fork", "deleted-fork",
         "other-branch"],
)  # fmt: skip
def test_only_odws_bot_pull_request_from_the_repository_is_adopted(
    facts: PullFacts, why: str | None
) -> None:
    found = foreign_pull(facts, repository=REPO, branch=BRANCH, bot_login=BOT)
    if why is None:
        assert found is None
    else:
        assert found is not None and why in found


def check(
    name_task: str | None = "1.1",
    app_id: int | None = APP,
    external_id: str | None = task_check_id(RUN, "1.1"),
) -> CheckFacts:
    return CheckFacts(name_task, app_id, external_id)


@pytest.mark.parametrize(
    ("facts", "live", "why"),
    [
        (check(), RUN, None),
        (check(app_id=15368), RUN, "created by App 15368, not by ODW"),
        (check(app_id=None), RUN, "created by App None"),
        (check(name_task=None), RUN, "not a task's"),
        (check(), None, "no ODW run is open"),
        (check(external_id=task_check_id("gh-octo-demo-main-old", "1.1")), RUN, "does not name"),
        (check(external_id=task_check_id(RUN, "1.2")), RUN, "does not name task 1.1"),
        (check(external_id=None), RUN, "does not name"),
        (check(external_id=f"{RUN}/1.1/assessment"), RUN, "does not name"),
    ],
    ids=["odws-live-task", "another-app", "no-app", "not-a-task", "no-open-run", "stale-run",
         "other-task", "no-external-id", "assessment-check"],
)  # fmt: skip
def test_a_click_counts_only_on_odws_check_run_of_a_live_run_and_task(
    facts: CheckFacts, live: str | None, why: str | None
) -> None:
    found = foreign_click(facts, app_id=APP, live_run=live)
    if why is None:
        assert found is None
    else:
        assert found is not None and why in found
