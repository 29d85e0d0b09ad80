"""What ODW made itself: a task's pull request and a task's check run.

Anyone who can open a pull request can name its head branch `roadmap-<id>`,
and another App can name a check run `ODW · <id>`; names prove nothing. A
pull request counts as a task's only when it is the one ODW recorded for the
task, opened by ODW's bot from a branch of the repository itself; a check-run
click counts only when ODW's App created the check run for a live run and
task of the repository. Each function answers why something is foreign, or
None when it is ODW's own. Pure: the callers read the facts.
"""

from __future__ import annotations

from dataclasses import dataclass

# A task check run's `external_id`: `<run id>/<task id>` (run ids hold no `/`).
_CHECK_ID_SEP = "/"


@dataclass(frozen=True)
class PullFacts:
    """What GitHub says of a pull request (REST answer or webhook body)."""

    number: int
    head_ref: str
    head_repo: str | None  # OWNER/NAME of the head branch; None when the fork is gone
    author: str | None = None  # `user.login`: who opened it


def _head_elsewhere(pull: PullFacts, repository: str) -> str | None:
    if pull.head_repo is None:
        return f"#{pull.number}'s head repository is gone (a deleted fork)"
    if pull.head_repo.lower() != repository.lower():
        return f"#{pull.number} comes from {pull.head_repo}, not from {repository}"
    return None


def foreign_pull_event(
    pull: PullFacts, *, repository: str, task_branch: str, recorded: int | None
) -> str | None:
    """Why a `pull_request` event is not about the task's own pull request.

    Only the pull request ODW recorded for the task (by number), with its head
    on the task branch of the repository itself, may change the task.
    """
    elsewhere = _head_elsewhere(pull, repository)
    if elsewhere is not None:
        return elsewhere
    if pull.head_ref != task_branch:
        return f"#{pull.number}'s head {pull.head_ref!r} is not the task branch {task_branch!r}"
    if recorded is None:
        return f"ODW recorded no pull request for the task; #{pull.number} is not ODW's"
    if pull.number != recorded:
        return f"#{pull.number} is not the task's pull request #{recorded}"
    return None


def foreign_pull(pull: PullFacts, *, repository: str, branch: str, bot_login: str) -> str | None:
    """Why a pull request found by its head branch is not one ODW may adopt:
    only ODW's bot's own, from `branch` of the repository itself."""
    elsewhere = _head_elsewhere(pull, repository)
    if elsewhere is not None:
        return elsewhere
    if pull.head_ref != branch:
        return f"#{pull.number}'s head {pull.head_ref!r} is not {branch!r}"
    if (pull.author or "").lower() != bot_login.lower():
        return f"#{pull.number} was opened by {pull.author or 'someone unknown'}, not {bot_login}"
    return None


def task_check_id(run_id: str, task: str) -> str:
    """The `external_id` ODW gives a task's check run."""
    return f"{run_id}{_CHECK_ID_SEP}{task}"


@dataclass(frozen=True)
class CheckFacts:
    """What a `check_run` webhook says of the check run clicked."""

    name_task: str | None  # the task its name claims (`ODW · 1.2` -> `1.2`)
    app_id: int | None  # `check_run.app.id`: the App that created it
    external_id: str | None


def foreign_click(check: CheckFacts, *, app_id: int, live_run: str | None) -> str | None:
    """Why a click on a check run's button must run nothing.

    `live_run` is the open run of the repository the delivery is about (None
    when none is open). The check run must be ODW's App's, and its external id
    must name that run and the task its name claims.
    """
    if check.app_id != app_id:
        return f"the check run was created by App {check.app_id}, not by ODW (App {app_id})"
    if check.name_task is None:
        return "the check run is not a task's"
    if live_run is None:
        return "no ODW run is open on this repository"
    if check.external_id != task_check_id(live_run, check.name_task):
        return (
            f"the check run's external id {check.external_id!r} does not name task "
            f"{check.name_task} of the open run {live_run}"
        )
    return None
