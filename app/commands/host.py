"""What the command handler needs of the App host: the engine's side of a command.

The handler parses, checks permission and answers; the host reads settings,
submits operator moves to the open run and launches runs. Kept narrow so the
handler is tested against the real App host and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from app.core.inputs import OperatorMove
from app.core.repo_config import RepoConfig
from app.github.protocols import Comments, Permissions, Pulls, Reactions


@dataclass(frozen=True)
class Where:
    """The repository a command is about, and the installation that reaches it."""

    installation: int
    repository: str  # OWNER/NAME
    base: str = "main"  # the repository's default branch, where ODW's runs live


@dataclass(frozen=True)
class Answer:
    """What the host did: words for the reply and links for it."""

    ok: bool
    text: str
    dispatched: bool = False  # work started (the `rocket` reaction)
    run_check_url: str | None = None
    task_pull_url: str | None = None


@dataclass(frozen=True)
class Launch:
    """A fresh run: `/odw run`, `/odw recover`, `/odw assess`, a retry after the run ended."""

    by: str
    dry_run: bool = False
    task: str | None = None  # only this task is selectable (`--task`)
    max_parallel: int | None = None
    resume_mode: str | None = None  # recover over surviving branches in this mode
    resume_task: str | None = None  # recover only this task's branch


class NoOpenRun(LookupError):
    """A move for a repository with no open run."""


class CommandHost(Protocol):
    def settings(self, where: Where) -> RepoConfig: ...
    def task_of_pull(self, where: Where, number: int) -> str | None: ...
    def pull_of_task(self, where: Where, task: str) -> int | None: ...
    def open_run(self, where: Where) -> str | None: ...
    def status(self, where: Where, task: str | None) -> Answer: ...
    def move(self, where: Where, move: OperatorMove) -> Answer: ...
    def launch(self, where: Where, launch: Launch) -> Answer: ...


class RepoGitHub(Protocol):
    """The GitHub ports of one repository the handler uses (`RepositoryClient`)."""

    @property
    def comments(self) -> Comments: ...
    @property
    def reactions(self) -> Reactions: ...
    @property
    def permissions(self) -> Permissions: ...
    @property
    def pulls(self) -> Pulls: ...
