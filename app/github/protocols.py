"""The narrow ports the rest of ODW sees: one small Protocol per use.

Each is implemented in this package on PyGithub and by hand-rolled fakes in
tests; values crossing the boundary are plain frozen dataclasses, never
PyGithub objects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class CheckAction:
    """A button on a check run (at most 3; label and identifier ≤ 20 characters)."""

    label: str
    description: str
    identifier: str


@dataclass(frozen=True)
class CheckRun:
    id: int
    name: str
    head_sha: str
    status: str
    conclusion: str | None
    external_id: str | None
    title: str | None
    summary: str | None
    details_url: str | None
    html_url: str | None
    node_id: str = ""  # the GraphQL id, for a landing's one request (`landing_writes`)


@dataclass(frozen=True)
class Comment:
    id: int
    body: str
    author: str
    author_type: str
    html_url: str
    node_id: str = ""  # GraphQL's id, for minimizeComment


@dataclass(frozen=True)
class PullRequest:
    number: int
    state: str
    draft: bool
    merged: bool
    title: str
    body: str
    head_ref: str
    head_sha: str
    base_ref: str
    html_url: str
    merge_commit_sha: str | None = None
    head_repo: str | None = None  # OWNER/NAME of the head branch (a fork's, or None if gone)
    author: str | None = None  # `user.login`: who opened it
    node_id: str = ""  # the GraphQL id, for mutations REST lacks (marking a draft ready)
    base_repo_node: str = ""  # the base repository's GraphQL id (`updateCheckRun` names it)


@dataclass(frozen=True)
class MergeResult:
    sha: str
    merged: bool
    message: str


@dataclass(frozen=True)
class WorkflowRun:
    id: int
    name: str
    display_title: str
    event: str
    status: str
    conclusion: str | None
    run_attempt: int
    head_branch: str | None
    head_sha: str
    path: str
    html_url: str
    head_repository: str | None = None  # OWNER/NAME the run's commit came from
    triggering_actor: str | None = None  # the login that started (or re-ran) the run
    created_at: float | None = None  # epoch seconds


@dataclass(frozen=True)
class WorkflowJob:
    id: int
    name: str
    status: str
    conclusion: str | None
    html_url: str


@dataclass(frozen=True)
class DispatchedRun:
    """A dispatched workflow run; `found_by` says how its id was learned."""

    run_id: int
    html_url: str
    found_by: str  # "return_run_details" or "resolved" (listed runs, GHES)


@dataclass(frozen=True)
class Artifact:
    id: int
    name: str
    size_in_bytes: int
    expired: bool


@dataclass(frozen=True)
class Permission:
    """A collaborator's permission (`admin`, `write`, `read`, `none`) and role name."""

    permission: str
    role_name: str


@dataclass(frozen=True)
class CheckRunFields:
    """What a check run create or update sends; None leaves a field alone."""

    status: str | None = None
    conclusion: str | None = None
    title: str | None = None
    summary: str | None = None
    text: str | None = None
    details_url: str | None = None
    external_id: str | None = None
    # None leaves the buttons alone; an empty sequence removes them.
    actions: Sequence[CheckAction] | None = None


class Checks(Protocol):
    def create_check_run(
        self, name: str, head_sha: str, fields: CheckRunFields, *, replacing: int | None = None
    ) -> CheckRun: ...
    def update_check_run(self, check_run_id: int, fields: CheckRunFields) -> CheckRun: ...
    def check_runs_for_ref(self, ref: str, name: str | None = None) -> list[CheckRun]: ...


class Comments(Protocol):
    def list_comments(self, number: int) -> list[Comment]: ...
    def create_comment(self, number: int, body: str) -> Comment: ...
    def edit_comment(self, comment_id: int, body: str) -> Comment: ...
    def find_marked_comment(self, number: int, marker: str, author: str) -> Comment | None: ...
    def minimize_comment(self, node_id: str) -> None:
        """Hide a comment as outdated (GraphQL `minimizeComment`, classifier OUTDATED)."""
        ...


class Reactions(Protocol):
    def react_to_comment(self, comment_id: int, content: str) -> None: ...


class Permissions(Protocol):
    def permission_of(self, username: str) -> Permission: ...


class Pulls(Protocol):
    def create_pull(
        self, head: str, base: str, title: str, body: str, *, draft: bool = True
    ) -> PullRequest: ...
    def get_pull(self, number: int) -> PullRequest: ...
    def find_pull(self, head: str, base: str) -> PullRequest | None:
        """ODW's own pull request from `head` of this repository into `base`
        (one the App's bot opened; open first, then newest), or None."""
        ...

    def update_pull(
        self,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: str | None = None,
    ) -> PullRequest: ...
    def merge_pull(
        self, number: int, sha: str, *, title: str | None = None, message: str | None = None
    ) -> MergeResult: ...
    def mark_ready(self, node_id: str) -> None:
        """A draft becomes ready for review (GraphQL only: REST cannot)."""
        ...


class Protection(Protocol):
    def required_contexts(self, branch: str) -> list[str] | None: ...


class CheckStates(Protocol):
    def check_states(self, sha: str) -> dict[str, str]: ...


class Contents(Protocol):
    def file_at(self, path: str, sha: str) -> bytes | None: ...
    def default_branch(self) -> str: ...
    def branch_sha(self, branch: str) -> str | None: ...
    def create_branch(self, branch: str, sha: str) -> None: ...
    def move_branch(self, branch: str, sha: str, *, force: bool = False) -> None: ...
    def delete_branch(self, branch: str) -> None: ...


class Dispatch(Protocol):
    def dispatch(
        self,
        workflow: str,
        ref: str,
        inputs: Mapping[str, str],
        find: Callable[[], DispatchedRun | None] | None = None,
    ) -> DispatchedRun: ...


class Runs(Protocol):
    def get_run(self, run_id: int) -> WorkflowRun: ...
    def list_runs(
        self, workflow: str, *, branch: str | None = None, event: str | None = None
    ) -> list[WorkflowRun]: ...
    def list_jobs(self, run_id: int) -> list[WorkflowJob]: ...


class Artifacts(Protocol):
    def list_artifacts(self, run_id: int) -> list[Artifact]: ...
    def find_artifact(self, run_id: int, name: str) -> Artifact | None: ...
    def download_artifact(self, artifact: Artifact, dest: Path, max_bytes: int) -> list[Path]: ...
