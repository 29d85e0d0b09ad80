"""What the fake GitHub holds. Tests assert on these records, not on calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.fakegithub.gitrepo import BareRepo


@dataclass
class Installation:
    id: int
    account: str
    repositories: list[str]
    permissions: dict[str, str]
    suspended: bool = False  # `fake.suspend`: no new tokens (403), as on GitHub


@dataclass
class Token:
    token: str
    installation_id: int
    repositories: list[str] | None
    permissions: dict[str, str]
    expires_at: float


@dataclass
class Repository:
    id: int
    owner: str
    name: str
    default_branch: str
    git: BareRepo
    installation_id: int | None = None
    collaborators: dict[str, str] = field(default_factory=dict)  # login -> role name
    next_number: int = 1
    issues: set[int] = field(default_factory=set)
    # branch -> required status check contexts; a protected branch refuses pushes
    protection: dict[str, list[str]] = field(default_factory=dict)
    statuses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # sha -> statuses
    # branch -> the rules of the rulesets on it ("pull_request", "update"): GH013 pushes
    rulesets: dict[str, list[str]] = field(default_factory=dict)
    # The merge methods the repository's settings allow ("About merge methods on
    # GitHub"; `allow_squash_merge` in "Get a repository"); `fake.merge_settings`.
    allow_squash_merge: bool = True
    allow_merge_commit: bool = True
    allow_rebase_merge: bool = True

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"


@dataclass
class PullRequest:
    id: int
    repo: str
    number: int
    title: str
    body: str
    head: str
    base: str
    draft: bool
    user: str
    state: str = "open"
    merged: bool = False
    merge_commit_sha: str | None = None
    created_at: float = 0.0
    # OWNER/NAME of the fork the head branch lives in (None: this repository).
    head_repo: str | None = None
    merged_by: str | None = None  # who merged it (a person on github.com, or the App)


@dataclass
class Comment:
    id: int
    repo: str
    number: int
    body: str
    user: str
    user_type: str
    created_at: float
    updated_at: float
    reactions: list[tuple[str, str]] = field(default_factory=list)  # (login, content)
    edits: int = 0
    minimized: str | None = None  # GraphQL minimizeComment's reason, lower-case (graphql.py)


@dataclass
class CheckRun:
    id: int
    repo: str
    name: str
    head_sha: str
    status: str
    conclusion: str | None
    external_id: str
    details_url: str | None
    output: dict[str, Any]
    actions: list[dict[str, str]]
    started_at: float
    completed_at: float | None = None
    updates: int = 0
    # The GitHub App that created it: only an App creates check runs, and each
    # is labelled with its creator (`check_run.app`, REST "Get a check run").
    app_id: int = 0
    # The body of every PATCH received once it was completed (tests assert none
    # tried to move its status or conclusion; see `checkruns.refuse_reopening`).
    patched_when_completed: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Artifact:
    id: int
    run_id: int
    name: str
    data: bytes
    created_at: float
    expired: bool = False  # past retention: listed `expired: true`, download 410


@dataclass
class Job:
    id: int
    name: str
    status: str = "queued"
    conclusion: str | None = None


@dataclass
class WorkflowRun:
    id: int
    repo: str
    workflow: str  # file name under .github/workflows
    workflow_id: int
    name: str
    display_title: str
    ref: str
    head_sha: str
    inputs: dict[str, str]
    event: str
    created_at: float
    status: str = "queued"
    conclusion: str | None = None
    run_attempt: int = 1
    jobs: list[Job] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    # Who started the run (`actor`) and who started this attempt of it
    # (`triggering_actor`: a re-run's is whoever re-ran it); "" is the App's bot.
    # https://github.blog/changelog/2022-07-19-differentiating-triggering-actor-from-executing-actor/
    actor: str = ""
    triggering_actor: str = ""
    # OWNER/NAME the run's commit came from (None: this repository), shown as
    # `head_repository` (OpenAPI `workflow-run`, a `minimal-repository`); a fork's
    # for a fork's pull_request run, the repository itself for workflow_dispatch.
    head_repo: str | None = None


@dataclass
class Delivery:
    id: str
    event: str
    action: str | None
    payload: dict[str, Any]
    status: int | None = None  # the receiver's last answer, None when not sent
    dropped: bool = False
    answers: list[str] = field(default_factory=list)  # every answer body, in order
