"""Landing through pull requests in App mode: the GitHub side of the landing's
port, the method per run, and the one-time note on the run check when branch
protection refuses a push.

The note lives in the run's projection under its own row (`LANDING`), never in
the rows the view sync rewrites, so it is written once and read by the sync.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from app.core.sanitize import inline_code
from app.github.errors import GitHubError, HeadMoved, MergeMethodNotAllowed, NotMergeable
from app.github.protocols import CheckStates, MergeResult, Protection, PullRequest, Pulls
from app.gitops.pull_port import ForgeFailed, MergeAnswerLost, MergeRefused
from app.store import Store

LANDING = "~landing"  # run_tasks row of the run's landing method
SQUASH_DISALLOWED = (
    "this repository does not allow squash merging, and ODW lands every task as one "
    "squash commit: allow it (Settings → General → Pull Requests → Allow squash merging) "
    "or land without pull requests (`integration: push` on an unprotected base)"
)
NOTICE = (
    "Branch protection refused a push to {base}: ODW lands the remaining tasks through "
    "pull requests (squash merge once the required checks pass)."
)


class RunLanding:
    """Whether a run's base refused pushes (then every landing goes through a PR)."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.store = store
        self.run_id = run_id

    def _row(self) -> dict[str, Any]:
        return dict(self.store.projections.tasks(self.run_id).get(LANDING, {}))

    def protected(self) -> bool:
        return bool(self._row().get("protected"))

    def mark_protected(self, base: str) -> None:
        if self.protected():
            return
        values = {"protected": True, "notice": NOTICE.format(base=inline_code(base, 100))}
        self.store.projections.merge_task(self.run_id, LANDING, values, status="noted")


def notice(handles: dict[str, dict[str, Any]]) -> str:
    return str(handles.get(LANDING, {}).get("notice") or "")


class GitHubPullPort:
    """`gitops.pull_port.PullRequestPort` over one repository's GitHub ports: the
    same calls, with GitHub's errors said in the port's terms (405 and 409 on a
    merge: refused as it stands; no answer or a 5xx: lost; a merge method the
    repository disallows, and anything else: failed)."""

    def __init__(self, pulls: Pulls, checks: CheckStates, protection: Protection) -> None:
        self._pulls = pulls
        self._checks = checks
        self._protection = protection

    def find_pull(self, head: str, base: str) -> PullRequest | None:
        with _failed():
            return self._pulls.find_pull(head, base)

    def create_pull(
        self, head: str, base: str, title: str, body: str, *, draft: bool
    ) -> PullRequest:
        with _failed():
            return self._pulls.create_pull(head, base, title, body, draft=draft)

    def get_pull(self, number: int) -> PullRequest:
        with _failed():
            return self._pulls.get_pull(number)

    def merge_pull(self, number: int, sha: str, *, title: str, message: str) -> MergeResult:
        try:
            return self._pulls.merge_pull(number, sha, title=title, message=message)
        except MergeMethodNotAllowed as exc:  # the same answer every time: never retried
            raise ForgeFailed(f"{exc}; {SQUASH_DISALLOWED}") from None
        except (NotMergeable, HeadMoved) as exc:
            raise MergeRefused(f"{exc.status} {exc.reason}") from None
        except GitHubError as exc:
            if exc.status and exc.status < 500:
                raise ForgeFailed(str(exc)) from None
            raise MergeAnswerLost(str(exc)) from None

    def required_contexts(self, branch: str) -> list[str] | None:
        with _failed():
            return self._protection.required_contexts(branch)

    def check_states(self, sha: str) -> dict[str, str]:
        with _failed():
            return self._checks.check_states(sha)


@contextmanager
def _failed() -> Iterator[None]:
    try:
        yield
    except GitHubError as exc:
        raise ForgeFailed(str(exc)) from None
