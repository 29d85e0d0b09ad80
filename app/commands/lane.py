"""Performing a recorded command: the outbox kind `app-command`.

The webhook handler (`app/service/handlers/commands.py`) only records the
delivery under a key of the comment (or the click), inside the delivery's
transaction, so a delivery seen twice, or a comment redelivered, is performed
once. The App host runs these entries on a lane of their own (`COMMAND_KINDS`),
so the `eyes` reaction never waits behind an integration.
"""

from __future__ import annotations

import weakref
from typing import Any

from app.apphost.executor import Executor, performer
from app.commands.apphost_host import AppCommandHost
from app.commands.handler import CommandHandler
from app.commands.host import Where
from app.commands.permission import PermissionCache
from app.github.client import RepositoryClient
from webhooks.payloads import CheckRunEvent, IssueCommentEvent, parse_event

COMMAND = "app-command"
COMMAND_KINDS = frozenset({COMMAND})


class CommandRunner:
    """Runs `app-command` entries for one executor (its store, GitHub and wake)."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor
        self.host = AppCommandHost(executor.store, self.client, executor.wake.set)
        self.handler = CommandHandler(
            self.host,
            self.client,
            executor.config.bot_login,
            executor.github.app_id,
            PermissionCache(),
        )

    def client(self, where: Where) -> RepositoryClient:
        return self.executor.github.repository(where.installation, where.repository)

    def perform(self, payload: dict[str, Any]) -> Any:
        event = parse_event(payload["event"], payload["payload"])
        if isinstance(event, IssueCommentEvent):
            handled = self.handler.on_issue_comment(event)
        elif isinstance(event, CheckRunEvent):
            handled = self.handler.on_check_run(event)
        else:
            return {"skipped": f"{payload['event']} is not a command"}
        return {"handled": handled.describe()}


_RUNNERS: weakref.WeakKeyDictionary[Executor, CommandRunner] = weakref.WeakKeyDictionary()


@performer(COMMAND)
def perform_command(executor: Executor, payload: dict[str, Any]) -> Any:
    """The executor's branch for `app-command` entries (one runner per executor)."""
    runner = _RUNNERS.get(executor)
    if runner is None:
        runner = _RUNNERS[executor] = CommandRunner(executor)
    return runner.perform(payload)
