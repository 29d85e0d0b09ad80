"""Typed views of the deliveries ODW acts on, parsed once at the choke point.

Only the fields ODW uses are typed; the raw payload stays in the inbox. A
payload that lacks a typed field, or holds a value no database column takes,
fails with PayloadError and the delivery is recorded as rejected with that
message. Validation is strict: a field takes its one JSON type (`"123"` and
`true` are not integers), as at the edge.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from webhooks.delivery import INT64_MAX


class PayloadError(ValueError):
    """The payload does not have the shape GitHub documents for its event."""


def _storable(value: object) -> None:
    """Refuse what a signed payload may hold but no column takes: NUL in text
    (PostgreSQL refuses it) and integers beyond 64 bits (both databases do).
    Nested models were checked when they were built."""
    if isinstance(value, str):
        if "\x00" in value:
            raise PydanticCustomError("nul_character", "text contains a NUL character")
    elif isinstance(value, int) and not isinstance(value, bool):
        if not -INT64_MAX - 1 <= value <= INT64_MAX:
            raise PydanticCustomError("int64_range", "integer outside the 64-bit range")
    elif isinstance(value, list):
        for item in value:
            _storable(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            _storable(key)
            _storable(item)


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    @field_validator("*", mode="after")
    @classmethod
    def _storable_values(cls, value: object) -> object:
        _storable(value)
        return value


class Account(_Model):
    login: str
    type: str | None = None


class Repository(_Model):
    id: int
    full_name: str
    private: bool | None = None
    default_branch: str | None = None


class InstallationRef(_Model):
    id: int


class GitHubEvent(_Model):
    """Fields every event may carry."""

    event: ClassVar[str] = ""
    action: str | None = None
    installation: InstallationRef | None = None
    repository: Repository | None = None
    sender: Account | None = None

    @property
    def installation_id(self) -> int | None:
        return self.installation.id if self.installation else None

    @property
    def repo(self) -> str | None:
        return self.repository.full_name if self.repository else None

    def subject(self) -> str:
        """A short description of what the event is about, for logs and records."""
        return self.event


class UnknownEvent(GitHubEvent):
    event: ClassVar[str] = "unknown"


class Installation(_Model):
    id: int
    account: Account | None = None
    target_type: str | None = None
    repository_selection: str | None = None
    permissions: dict[str, str] = {}
    events: list[str] = []
    suspended_at: str | None = None


class InstallationRepo(_Model):
    id: int
    full_name: str
    private: bool | None = None


class InstallationEvent(GitHubEvent):
    event: ClassVar[str] = "installation"
    action: str
    installation: Installation  # type: ignore[assignment]
    repositories: list[InstallationRepo] | None = None

    def subject(self) -> str:
        who = self.installation.account.login if self.installation.account else "?"
        return f"installation {self.installation.id} ({who})"


class InstallationRepositoriesEvent(GitHubEvent):
    event: ClassVar[str] = "installation_repositories"
    action: str
    installation: Installation  # type: ignore[assignment]
    repository_selection: str | None = None
    repositories_added: list[InstallationRepo] = []
    repositories_removed: list[InstallationRepo] = []

    def subject(self) -> str:
        return (
            f"installation {self.installation.id}: +{len(self.repositories_added)}"
            f" -{len(self.repositories_removed)} repositories"
        )


class Commit(_Model):
    id: str
    message: str | None = None


class PushEvent(GitHubEvent):
    event: ClassVar[str] = "push"
    ref: str
    before: str
    after: str
    created: bool = False
    deleted: bool = False
    forced: bool = False
    commits: list[Commit] = []
    head_commit: Commit | None = None

    def subject(self) -> str:
        return f"{self.ref} {self.before[:7]}..{self.after[:7]}"


class RepoRef(_Model):
    full_name: str


class Ref(_Model):
    ref: str
    sha: str
    # The repository the branch lives in: a fork's for a fork's pull request,
    # null when that fork was deleted.
    repo: RepoRef | None = None


class PullRequest(_Model):
    id: int
    number: int
    state: str
    title: str
    draft: bool | None = None
    merged: bool | None = None
    merge_commit_sha: str | None = None
    head: Ref
    base: Ref
    user: Account | None = None


class PullRequestEvent(GitHubEvent):
    event: ClassVar[str] = "pull_request"
    action: str
    number: int
    pull_request: PullRequest

    def subject(self) -> str:
        return f"pull request #{self.number} ({self.pull_request.head.ref})"


class IssueRef(_Model):
    number: int
    title: str | None = None
    pull_request: dict[str, Any] | None = None


class Comment(_Model):
    id: int
    body: str | None = None
    user: Account | None = None
    author_association: str | None = None


class IssueCommentEvent(GitHubEvent):
    event: ClassVar[str] = "issue_comment"
    action: str
    issue: IssueRef
    comment: Comment

    @property
    def on_pull_request(self) -> bool:
        return self.issue.pull_request is not None

    def subject(self) -> str:
        kind = "pull request" if self.on_pull_request else "issue"
        return f"comment {self.comment.id} on {kind} #{self.issue.number}"


class RequestedAction(_Model):
    identifier: str


class AppRef(_Model):
    id: int


class CheckRun(_Model):
    id: int
    name: str
    head_sha: str
    status: str | None = None
    conclusion: str | None = None
    external_id: str | None = None
    app: AppRef | None = None  # the GitHub App that created the check run


class CheckRunEvent(GitHubEvent):
    event: ClassVar[str] = "check_run"
    action: str
    check_run: CheckRun
    requested_action: RequestedAction | None = None

    def subject(self) -> str:
        return f"check run {self.check_run.id} {self.check_run.name!r}"


class CheckSuite(_Model):
    id: int
    head_sha: str
    head_branch: str | None = None
    status: str | None = None
    conclusion: str | None = None


class CheckSuiteEvent(GitHubEvent):
    event: ClassVar[str] = "check_suite"
    action: str
    check_suite: CheckSuite

    def subject(self) -> str:
        return f"check suite {self.check_suite.id} ({self.check_suite.head_branch})"


class StatusEvent(GitHubEvent):
    """A commit status changed (a CI that reports statuses rather than check runs)."""

    event: ClassVar[str] = "status"
    sha: str
    context: str
    state: str

    def subject(self) -> str:
        return f"status {self.context!r} {self.state} on {self.sha[:12]}"


class WorkflowRun(_Model):
    id: int
    name: str | None = None
    head_branch: str | None = None
    head_sha: str
    status: str | None = None
    conclusion: str | None = None
    run_attempt: int | None = None
    display_title: str | None = None
    workflow_id: int | None = None
    event: str | None = None
    # What judging a completed run checks (`app/apphost/dispatched.py`), so the
    # delivery itself is the run's record and it is not read again.
    path: str | None = None
    html_url: str | None = None
    created_at: str | None = None
    head_repository: Repository | None = None
    triggering_actor: Account | None = None
    actor: Account | None = None


class WorkflowRunEvent(GitHubEvent):
    event: ClassVar[str] = "workflow_run"
    action: str
    workflow_run: WorkflowRun

    def subject(self) -> str:
        return f"workflow run {self.workflow_run.id} ({self.workflow_run.head_branch})"


class WorkflowJob(_Model):
    id: int
    run_id: int
    name: str
    head_sha: str
    status: str | None = None
    conclusion: str | None = None
    run_attempt: int | None = None
    labels: list[str] = []
    html_url: str | None = None  # the job's log page, where "Details" should land


class WorkflowJobEvent(GitHubEvent):
    event: ClassVar[str] = "workflow_job"
    action: str
    workflow_job: WorkflowJob

    def subject(self) -> str:
        return f"workflow job {self.workflow_job.id} of run {self.workflow_job.run_id}"


EVENT_TYPES: dict[str, type[GitHubEvent]] = {
    cls.event: cls
    for cls in (
        InstallationEvent,
        InstallationRepositoriesEvent,
        PushEvent,
        PullRequestEvent,
        IssueCommentEvent,
        CheckRunEvent,
        CheckSuiteEvent,
        StatusEvent,
        WorkflowRunEvent,
        WorkflowJobEvent,
    )
}


def parse_event(name: str, payload: dict[str, Any]) -> GitHubEvent:
    """The typed event for `name` (an `X-GitHub-Event` value)."""
    model = EVENT_TYPES.get(name, UnknownEvent)
    try:
        return model.model_validate(payload)
    except ValidationError as exc:
        raise _payload_error(name, exc) from None


def parse_event_json(name: str, body: bytes) -> GitHubEvent:
    """The same from the stored JSON text: parts of the payload no model
    names are checked and skipped by the parser, never built in memory."""
    model = EVENT_TYPES.get(name, UnknownEvent)
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        raise _payload_error(name, exc) from None


def _payload_error(name: str, exc: ValidationError) -> PayloadError:
    problems = [
        f"{'.'.join(str(p) for p in err['loc']) or 'payload'}: {err['msg']}"
        for err in exc.errors()[:3]
    ]
    more = f" (and {exc.error_count() - 3} more)" if exc.error_count() > 3 else ""
    return PayloadError(f"{name} payload: {'; '.join(problems)}{more}")
