"""`CommandReceived`: a `/odw` comment or a check-run click, handled by
`app.commands.handler.CommandHandler` over the App's `CommandHost`.

The webhook handler only recorded it, keyed by the comment (or the click), so
a delivery seen twice is performed once. These entries run on a lane of their
own (`COMMAND_KINDS`), so the `eyes` reaction never waits behind an integration.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.apphost.command_host import AppCommandHost
from app.apphost.performers.base import HostContext
from app.apphost.runs import RunKey
from app.commands.handler import CommandHandler
from app.commands.host import Where
from app.commands.permission import PermissionCache
from app.commands.received import COMMAND, CommandReceived
from app.core.discovery import SurvivorEvidence
from app.github.client import RepositoryClient
from app.github.errors import GitHubError
from app.gitops.evidence.repo import RepoError
from app.gitops.evidence.survivors import kept_branch_evidence
from app.gitops.runner import GitError

COMMAND_KINDS = frozenset({COMMAND})


@dataclass
class CommandPerformer:
    context: HostContext
    handler: CommandHandler = field(init=False)

    def __post_init__(self) -> None:
        ctx = self.context
        host = AppCommandHost(ctx.store, self.client, ctx.wake.set, read_branch=self.read_branch)
        self.handler = CommandHandler(
            host, self.client, ctx.config.bot_login, ctx.github.app_id, PermissionCache()
        )

    def client(self, where: Where) -> RepositoryClient:
        return self.context.github.repository(where.installation, where.repository)

    def read_branch(self, where: Where, branch: str, task: str) -> SurvivorEvidence:
        """A kept task branch as the App's clone reads it now (for recover and rearm)."""
        ctx = self.context
        key = RunKey(where.installation, where.repository, where.base)
        runs_root = ctx.config.data_dir / "runs"
        try:
            repo = ctx.clone(key)
        except (RepoError, GitError, GitHubError) as exc:
            return SurvivorEvidence(collection_error=str(exc))
        return kept_branch_evidence(repo, where.base, branch, task, runs_root)

    def perform(self, command: CommandReceived, *, again: bool) -> Any:
        return {"handled": self.handler.perform(command).describe()}

    def gave_up(self, command: CommandReceived, error: str) -> None:
        """A command that keeps failing stays unanswered; its last error is the entry's."""
