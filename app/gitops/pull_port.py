"""What landing through a pull request needs of the forge: the narrow port gitops owns.

The App implements it over its GitHub client (`app.apphost.pr_landing.GitHubPullPort`);
`app.gitops` knows no forge. Every call raises `ForgeFailed` when the forge
refuses or fails; the merge also says, by its own errors, when to go round
again (`MergeRefused`) and when its answer was lost (`MergeAnswerLost`).
"""

from __future__ import annotations

from typing import Protocol


class ForgeFailed(Exception):
    """The forge refused a request or could not answer it; its words say which."""


class MergeRefused(ForgeFailed):
    """The pull request cannot be merged as it stands (base moved, checks missing)
    or its head is no longer the verified sha: go round from a fresh fetch."""


class MergeAnswerLost(ForgeFailed):
    """No answer to a merge (a server error, a timeout): it may have merged."""


class PullView(Protocol):
    """A pull request as the landing reads it."""

    @property
    def number(self) -> int: ...
    @property
    def state(self) -> str: ...  # "open" or "closed"
    @property
    def draft(self) -> bool: ...
    @property
    def merged(self) -> bool: ...
    @property
    def merge_commit_sha(self) -> str | None: ...


class MergeView(Protocol):
    """A merge's answer: merged or not, the squash commit's sha and the forge's words."""

    @property
    def sha(self) -> str: ...
    @property
    def merged(self) -> bool: ...
    @property
    def message(self) -> str: ...


class PullRequestPort(Protocol):
    def find_pull(self, head: str, base: str) -> PullView | None:
        """ODW's own pull request from `head` of this repository into `base`
        (open first, then newest), or None."""
        ...

    def create_pull(
        self, head: str, base: str, title: str, body: str, *, draft: bool
    ) -> PullView: ...
    def get_pull(self, number: int) -> PullView: ...
    def merge_pull(self, number: int, sha: str, *, title: str, message: str) -> MergeView:
        """Squash-merge exactly `sha` (the head whose checks were verified)."""
        ...

    def required_contexts(self, branch: str) -> list[str] | None:
        """The checks `branch` requires before a merge; None when unknown."""
        ...

    def check_states(self, sha: str) -> dict[str, str]:
        """Each check of `sha` by name: `success`, `pending` or `failure`."""
        ...
