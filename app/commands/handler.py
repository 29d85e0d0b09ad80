"""Handling `/odw` comments and check-run button clicks, each as recorded
(`app.commands.received.CommandReceived`).

For a comment (`issue_comment.created` only; an edit never re-runs
anything): ignore the App's own comments and unlisted bots; find the command
lines; react `eyes` at once; stop if the comment was already answered (its
marked reply exists); then for each command in order: parse (a mistake
answers the nearest verb's usage), check the commenter's permission, refuse
work from a fork's pull request, and hand it to the host. One reply quotes
each command and says what happened. A button click is the same command with
the same permission check on the clicker, answered on the task's pull request,
and only on a check run ODW's App created for a task of the open run
(`app.core.ownership.foreign_click`); any other click runs nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from app.commands.answers import Line, reply_body, reply_marker, sentence
from app.commands.buttons import BUTTONS, command_for_click, task_of_check
from app.commands.grammar import VERBS, Command, CommandError, parse_line
from app.commands.host import Answer, CommandHost, RepoGitHub, Where
from app.commands.lines import command_lines
from app.commands.permission import PermissionCache, ignored_author, is_bot
from app.commands.received import ButtonClick, CommandReceived, CommentCommand
from app.commands.verbs import Asked
from app.core.ownership import CheckFacts, foreign_click
from app.core.repo_config import RepoConfig
from app.core.sanitize import sanitize_markdown
from app.github.errors import GitHubError

log = logging.getLogger("odw.commands")


@dataclass
class Handled:
    """What a delivery led to, for the worker's record."""

    ignored: str | None = None
    lines: list[Line] = field(default_factory=list)

    def describe(self) -> str:
        if self.ignored:
            return f"ignored: {self.ignored}"
        return "; ".join(f"{ln.command}: {'ok' if ln.ok else 'refused'}" for ln in self.lines)


@dataclass
class CommandHandler:
    host: CommandHost
    github: Callable[[Where], RepoGitHub]
    app_login: str
    app_id: int  # ODW's App: a button counts only on a check run it created
    permissions: PermissionCache = field(default_factory=PermissionCache)
    clock: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))

    # -- comments ----------------------------------------------------------------

    def perform(self, received: CommandReceived) -> Handled:
        """Handle one recorded command (the App host's `app-command` entry)."""
        if isinstance(received.said, CommentCommand):
            return self.on_comment(received.where, received.said)
        return self.on_click(received.where, received.said)

    # -- comments ----------------------------------------------------------------

    def on_comment(self, where: Where, comment: CommentCommand) -> Handled:
        login, kind = comment.author, comment.author_type
        lines = command_lines(comment.body)
        if not lines:
            return Handled(ignored="no /odw command")
        # A person's command is acknowledged before anything else is read; a bot's
        # only once `allowedBots` (in the settings) says it counts.
        config = self.host.settings(where) if is_bot(login, kind) else None
        why = ignored_author(login, kind, config or RepoConfig(), self.app_login)
        if why is not None:
            return Handled(ignored=why)
        gh = self.github(where)
        gh.reactions.react_to_comment(comment.comment_id, "eyes")
        config = config or self.host.settings(where)
        number = comment.number
        marker = reply_marker(comment.comment_id)
        if gh.comments.find_marked_comment(number, marker, self.app_login) is not None:
            return Handled(ignored="already answered")
        on_pull = comment.on_pull_request
        default_task = self.host.task_of_pull(where, number) if on_pull else None
        fork = self._fork(where, gh, number) if on_pull else None
        done = [self._one(where, gh, config, line, login, default_task, fork) for line in lines]
        self._answer(gh, comment.comment_id, number, marker, login, done)
        return Handled(lines=done)

    def _one(
        self,
        where: Where,
        gh: RepoGitHub,
        config: RepoConfig,
        line: str,
        login: str,
        default_task: str | None,
        fork: str | None,
    ) -> Line:
        try:
            command = parse_line(line, default_task=default_task)
        except CommandError as exc:
            # The problem can echo the commenter's words: they render as text.
            return Line(
                line,
                False,
                f"{sentence(sanitize_markdown(exc.problem))} Usage: `{exc.usage}`. Nothing was "
                "changed; `/odw help` lists every command.",
            )
        if command.changes_state:
            need = config.command_permission
            decision = self.permissions.check(
                where.repository, login, need, gh.permissions.permission_of
            )
            if not decision.allowed:
                return Line(line, False, decision.refusal(), refusal=True)
            if fork is not None:
                return Line(
                    line,
                    False,
                    f"this pull request comes from a fork ({fork}); ODW never starts work "
                    "from a fork's pull request. Nothing was changed; comment on the task's "
                    "pull request or on an issue instead.",
                    refusal=True,
                )
        answer = self._execute(where, command, login, config)
        return Line(line, answer.ok, answer.text, answer=answer)

    def _execute(self, where: Where, c: Command, by: str, config: RepoConfig) -> Answer:
        try:
            return VERBS[c.verb].do(Asked(self.host, where, by, config, self.clock()), c)
        except GitHubError as exc:
            log.warning("command %s failed: %s", c.line, exc)
            status = exc.status or "no response"
            return Answer(False, f"GitHub did not answer ({status}); nothing may have changed")

    def _fork(self, where: Where, gh: RepoGitHub, number: int) -> str | None:
        """The fork a pull request comes from, or None for a branch of this repository."""
        head = gh.pulls.get_pull(number).head_repo
        if head is None:
            return "a deleted fork"
        return head if head.lower() != where.repository.lower() else None

    def _answer(
        self,
        gh: RepoGitHub,
        comment_id: int,
        number: int,
        marker: str,
        login: str,
        done: list[Line],
    ) -> None:
        if any(ln.answer is not None and ln.answer.dispatched for ln in done):
            gh.reactions.react_to_comment(comment_id, "rocket")
        if any(not ln.ok for ln in done):
            gh.reactions.react_to_comment(comment_id, "confused")
        # The reply last: it is the marker that says the comment was answered.
        gh.comments.create_comment(number, reply_body(marker, login, done))

    # -- check-run buttons ---------------------------------------------------------

    def on_click(self, where: Where, click: ButtonClick) -> Handled:
        task = task_of_check(click.check_name)
        if task is None:
            return Handled(ignored=f"{click.check_name!r} is not a task's check run")
        facts = CheckFacts(task, click.check_app_id, click.external_id)
        why = foreign_click(facts, app_id=self.app_id, live_run=self.host.open_run(where))
        if why is not None:
            log.info("check run %s %r click ignored: %s", click.check_run_id, click.check_name, why)
            return Handled(ignored=f"not ODW's check run of a live task: {why}")
        login = click.by
        config = self.host.settings(where)
        why = ignored_author(login, click.by_type, config, self.app_login)
        if why is not None:
            return Handled(ignored=why)
        command = command_for_click(click.identifier, task, login)
        if command is None:
            return Handled(ignored=f"unknown button {click.identifier!r}")
        gh = self.github(where)
        label = BUTTONS[command.verb][0] if command.verb in BUTTONS else click.identifier
        line = f"{command.line}  (the {label} button on `{click.check_name}`)"
        decision = self.permissions.check(
            where.repository, login, config.command_permission, gh.permissions.permission_of
        )
        if not decision.allowed:
            done = Line(line, False, decision.refusal(), refusal=True)
        else:
            answer = self._execute(where, command, login, config)
            done = Line(line, answer.ok, answer.text, answer=answer)
        number = self.host.pull_of_task(where, task)
        if number is not None:
            marker = f"<!-- odw:click {click.check_run_id} -->"
            gh.comments.create_comment(number, reply_body(marker, login, [done]))
        return Handled(lines=[done])
