"""Handling `/odw` comments and check-run button clicks.

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

from app.commands.answers import Line, reply_body, reply_marker
from app.commands.buttons import BUTTONS, command_for_click, task_of_check
from app.commands.grammar import Command, CommandError, help_text, parse_line
from app.commands.host import Answer, CommandHost, Launch, NoOpenRun, RepoGitHub, Where
from app.commands.lines import command_lines
from app.commands.permission import PermissionCache, ignored_author, is_bot
from app.core.inputs import OperatorMove
from app.core.ownership import CheckFacts, foreign_click
from app.core.repo_config import RepoConfig
from app.core.sanitize import sanitize_markdown
from app.github.errors import GitHubError
from webhooks.payloads import CheckRunEvent, IssueCommentEvent

log = logging.getLogger("odw.commands")

MOVES = frozenset({"retry", "rearm", "complete", "force-start", "halt", "resume"})


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

    def on_issue_comment(self, event: IssueCommentEvent) -> Handled:
        if event.action != "created":
            return Handled(ignored=f"a comment {event.action}; only new comments are commands")
        where = _where(event)
        if where is None:
            return Handled(ignored="no installation or repository in the delivery")
        user = event.comment.user
        login = user.login if user else ""
        kind = user.type if user else None
        lines = command_lines(event.comment.body or "")
        if not lines:
            return Handled(ignored="no /odw command")
        # A person's command is acknowledged before anything else is read; a bot's
        # only once `allowedBots` (in the settings) says it counts.
        config = self.host.settings(where) if is_bot(login, kind) else None
        why = ignored_author(login, kind, config or RepoConfig(), self.app_login)
        if why is not None:
            return Handled(ignored=why)
        gh = self.github(where)
        gh.reactions.react_to_comment(event.comment.id, "eyes")
        config = config or self.host.settings(where)
        number = event.issue.number
        marker = reply_marker(event.comment.id)
        if gh.comments.find_marked_comment(number, marker, self.app_login) is not None:
            return Handled(ignored="already answered")
        default_task = self.host.task_of_pull(where, number) if event.on_pull_request else None
        fork = self._fork(where, gh, number) if event.on_pull_request else None
        done = [self._one(where, gh, config, line, login, default_task, fork) for line in lines]
        self._answer(gh, event.comment.id, number, marker, login, done)
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
                f"{sanitize_markdown(exc.problem)}. Usage: `{exc.usage}`. Nothing was changed; "
                "`/odw help` lists every command.",
            )
        if command.changes_state:
            need = config.command_permission
            decision = self.permissions.check(
                where.repository, login, need, gh.permissions.permission_of
            )
            if not decision.allowed:
                return Line(line, False, decision.refusal(login), refusal=True)
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
            if c.verb == "help":
                return Answer(True, help_text(permission=config.command_permission))
            if c.verb == "status":
                return self.host.status(where, c.task)
            if c.verb in MOVES:
                return self._move(where, c, by)
            if c.verb == "run":
                launch = Launch(by, dry_run=c.dry_run, task=c.task, max_parallel=c.max_parallel)
                return self.host.launch(where, launch)
            # recover and assess: a fresh launch over surviving branches
            return self.host.launch(where, Launch(by, resume_mode=c.mode, resume_task=c.task))
        except GitHubError as exc:
            log.warning("command %s failed: %s", c.line, exc)
            status = exc.status or "no response"
            return Answer(False, f"GitHub did not answer ({status}); nothing may have changed")

    def _move(self, where: Where, c: Command, by: str) -> Answer:
        move = OperatorMove(
            at=self.clock(),
            move=c.verb,  # type: ignore[arg-type]  # MOVES are the core's MoveName
            task=c.task,
            by=by,
            reason=c.reason or f"/odw {c.verb} by @{by}",
            overrides=dict(c.overrides),
        )
        try:
            return self.host.move(where, move)
        except NoOpenRun:
            if c.verb == "retry" and c.task is not None:
                # The run ended: continue the task from its surviving branch in a new run.
                answer = self.host.launch(
                    where, Launch(by, resume_mode="continue", resume_task=c.task)
                )
                return Answer(
                    answer.ok,
                    f"the run had ended; {answer.text}",
                    answer.dispatched,
                    answer.run_check_url,
                    answer.task_pull_url,
                )
            return Answer(False, "no ODW run is open on this repository; `/odw run` starts one")

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

    def on_check_run(self, event: CheckRunEvent) -> Handled:
        if event.action == "requested_action" and event.requested_action is not None:
            identifier = event.requested_action.identifier
        elif event.action == "rerequested":
            identifier = "rerequested"
        else:
            return Handled(ignored=f"check_run {event.action} is not a click")
        where = _where(event)
        task = task_of_check(event.check_run.name)
        if where is None or task is None:
            return Handled(ignored=f"{event.check_run.name!r} is not a task's check run")
        run = event.check_run
        facts = CheckFacts(task, run.app.id if run.app else None, run.external_id)
        why = foreign_click(facts, app_id=self.app_id, live_run=self.host.open_run(where))
        if why is not None:
            log.info("%s click ignored: %s", event.subject(), why)
            return Handled(ignored=f"not ODW's check run of a live task: {why}")
        login = event.sender.login if event.sender else ""
        config = self.host.settings(where)
        why = ignored_author(
            login, event.sender.type if event.sender else None, config, self.app_login
        )
        if why is not None:
            return Handled(ignored=why)
        command = command_for_click(identifier, task, login)
        if command is None:
            return Handled(ignored=f"unknown button {identifier!r}")
        gh = self.github(where)
        label = BUTTONS[command.verb][0] if command.verb in BUTTONS else identifier
        line = f"{command.line}  (the {label} button on `{event.check_run.name}`)"
        decision = self.permissions.check(
            where.repository, login, config.command_permission, gh.permissions.permission_of
        )
        if not decision.allowed:
            done = Line(line, False, decision.refusal(login), refusal=True)
        else:
            answer = self._execute(where, command, login, config)
            done = Line(line, answer.ok, answer.text, answer=answer)
        number = self.host.pull_of_task(where, task)
        if number is not None:
            marker = f"<!-- odw:click {event.check_run.id} -->"
            gh.comments.create_comment(number, reply_body(marker, login, [done]))
        return Handled(lines=[done])


def _where(event: IssueCommentEvent | CheckRunEvent) -> Where | None:
    if event.installation_id is None or event.repository is None:
        return None
    base = event.repository.default_branch or "main"
    return Where(event.installation_id, event.repository.full_name, base)
