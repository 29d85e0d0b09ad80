"""`/odw <verb> [args]`: one table that both parses commands and writes `/odw help`.

Each `Verb` row carries its usage, what it does, who may use it and an example;
`parse_line` reads arguments only through the row's `parse`, and `help_text`
renders the same rows, so the help cannot list a verb the parser does not take
(`tests/commands/test_grammar.py` compares them); `do` is what the verb does
(`app.commands.verbs`), so running a command is one look-up too. No I/O here.
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from app.commands import verbs
from app.commands.host import Answer
from app.commands.verbs import Asked, Do
from app.core.config import ConfigError, load_overrides

PREFIX = "/odw"
_TASK_ID = re.compile(r"^\d+(?:\.\d+)*$")
RECOVER_MODES = ("assess", "review", "continue")

# Who may use a verb: anyone who can read the repository, or the level
# `.github/odw.yml` `commandPermission` sets for commands that change something.
Access = Literal["read", "configured"]


@dataclass(frozen=True)
class Command:
    """One parsed command; `line` is the text as written (for the reply's quote)."""

    verb: str
    line: str
    task: str | None = None
    reason: str = ""
    dry_run: bool = False
    max_parallel: int | None = None
    mode: str | None = None
    overrides: Mapping[str, Any] = field(default_factory=dict)

    @property
    def changes_state(self) -> bool:
        return VERBS[self.verb].access == "configured"


class CommandError(ValueError):
    """A line that starts with `/odw` but is not a valid command; nothing is done."""

    def __init__(self, line: str, verb: str, problem: str) -> None:
        super().__init__(problem)
        self.line = line
        self.verb = verb  # the verb meant, or the nearest one
        self.problem = problem

    @property
    def usage(self) -> str:
        return VERBS[self.verb].usage


@dataclass(frozen=True)
class _Args:
    """The words after the verb, and the id a task's pull request implies."""

    verb: str
    line: str
    words: list[str]
    default_task: str | None

    def fail(self, problem: str) -> CommandError:
        return CommandError(self.line, self.verb, problem)

    def task_id(self, word: str) -> str:
        if not _TASK_ID.match(word):
            raise self.fail(f"{word!r} is not a task id like 1.2.3")
        return word

    def required_task(self, words: list[str]) -> str:
        if words:
            return self.task_id(words.pop(0))
        if self.default_task is None:
            raise self.fail("a task id is needed here (only a task's pull request implies one)")
        return self.default_task

    def optional_task(self, words: list[str]) -> str | None:
        return self.task_id(words.pop(0)) if words else self.default_task

    def nothing_more(self, words: list[str]) -> None:
        if words:
            raise self.fail(f"unexpected {words[0]!r}")


Parser = Callable[[_Args], Command]


@dataclass(frozen=True)
class Verb:
    name: str
    usage: str
    summary: str
    example: str
    access: Access
    parse: Parser
    do: Do


def _help(a: _Args) -> Command:
    a.nothing_more(a.words)
    return Command("help", a.line)


def _show_help(a: Asked, c: Command) -> Answer:
    return Answer(True, help_text(permission=a.config.command_permission))


def _status(a: _Args) -> Command:
    words = list(a.words)
    task = a.optional_task(words)
    a.nothing_more(words)
    return Command("status", a.line, task=task)


def _run(a: _Args) -> Command:
    words = list(a.words)
    dry_run, task, max_parallel = False, None, None
    while words:
        word = words.pop(0)
        if word == "--dry-run":
            dry_run = True
        elif word == "--task":
            if not words:
                raise a.fail("--task needs a task id")
            task = a.task_id(words.pop(0))
        elif word == "--max-parallel":
            value = words.pop(0) if words else ""
            if not value.isdigit() or not 1 <= int(value) <= 64:
                raise a.fail("--max-parallel needs a number from 1 to 64")
            max_parallel = int(value)
        else:
            raise a.fail(f"unexpected {word!r}")
    return Command("run", a.line, task=task, dry_run=dry_run, max_parallel=max_parallel)


def _one_task(verb: str) -> Parser:
    def parse(a: _Args) -> Command:
        words = list(a.words)
        task = a.required_task(words)
        a.nothing_more(words)
        return Command(verb, a.line, task=task)

    return parse


def _override_value(text: str) -> object:
    """`5` is a number, `'{"build": 3}'` JSON, anything else text."""
    if text.isdigit():
        return int(text)
    if text[:1] in "{[":
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _rearm(a: _Args) -> Command:
    words = list(a.words)
    task = a.task_id(words.pop(0)) if words and "=" not in words[0] else a.required_task([])
    overrides: dict[str, object] = {}
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise a.fail(f"{word!r} is not key=value")
        name, dot, sub = key.partition(".")
        if dot:  # gateRetryBudget.build=4 sets one gate's budget
            budgets = overrides.setdefault(name, {})
            if not isinstance(budgets, dict) or not sub:
                raise a.fail(f"{key!r} mixes a whole value and a per-name one")
            budgets[sub] = _override_value(value)
        else:
            overrides[key] = _override_value(value)
    if not overrides:
        raise a.fail(
            "rearm needs at least one override, such as gateRetryBudget.build=4 or "
            'instructions="..." (to run the task again as it was, use `retry` or `recover`)'
        )
    try:
        checked = load_overrides(overrides)
    except ConfigError as exc:
        raise a.fail(str(exc)) from None
    return Command("rearm", a.line, task=task, overrides=checked)


def _complete(a: _Args) -> Command:
    words = list(a.words)
    task = a.task_id(words.pop(0)) if words and words[0] != "--reason" else a.required_task([])
    if len(words) != 2 or words[0] != "--reason" or not words[1].strip():
        raise a.fail('a reason is needed: --reason "why it is complete"')
    return Command("complete", a.line, task=task, reason=words[1].strip())


def _halt(a: _Args) -> Command:
    return Command("halt", a.line, reason=" ".join(a.words))


def _resume(a: _Args) -> Command:
    a.nothing_more(a.words)
    return Command("resume", a.line)


def _recover(a: _Args) -> Command:
    """`recover ID` continues one task's kept work; without an id the default mode
    only assesses every surviving branch (nothing is written)."""
    words = list(a.words)
    mode = None
    if words and not _TASK_ID.match(words[0]):
        mode = words.pop(0)
        if mode not in RECOVER_MODES:
            raise a.fail(f"{mode!r} is not a recovery mode ({', '.join(RECOVER_MODES)})")
    task = a.optional_task(words)
    a.nothing_more(words)
    mode = mode or ("continue" if task is not None else "assess")
    return Command("recover", a.line, task=task, mode=mode)


def _assess(a: _Args) -> Command:
    words = list(a.words)
    task = a.required_task(words)
    a.nothing_more(words)
    return Command("assess", a.line, task=task, mode="assess")


_ROWS: tuple[Verb, ...] = (
    Verb("help", "/odw help", "list these commands", "/odw help", "read", _help, _show_help),
    Verb(
        "status",
        "/odw status [ID]",
        "the run's state, or one task's",
        "/odw status 1.2.3",
        "read",
        _status,
        verbs.status,
    ),
    Verb(
        "run",
        "/odw run [--dry-run] [--task ID] [--max-parallel N]",
        "start a run on the base (a dry run reports what would run)",
        "/odw run --max-parallel 3",
        "configured",
        _run,
        verbs.run,
    ),
    Verb(
        "retry",
        "/odw retry ID",
        "start a stopped task over from plan on a fresh branch from the base "
        "(for a fault or flake; after the run ended, in a new run)",
        "/odw retry 1.2.3",
        "configured",
        _one_task("retry"),
        verbs.move,
    ),
    Verb(
        "rearm",
        "/odw rearm ID key=value...",
        "re-arm a task with at least one override (instructions, agent, model, "
        "stageAttempts, gateRetryBudget[.gate], routeBudget[.stage]) and continue "
        "from its kept work",
        "/odw rearm 1.2.3 stageAttempts=3 gateRetryBudget.build=4",
        "configured",
        _rearm,
        verbs.move,
    ),
    Verb(
        "complete",
        '/odw complete ID --reason "..."',
        "mark a stopped stage complete and go on",
        '/odw complete 1.2.3 --reason "fixed by hand"',
        "configured",
        _complete,
        verbs.move,
    ),
    Verb(
        "force-start",
        "/odw force-start ID",
        "start a task whose dependencies are not met",
        "/odw force-start 1.2.3",
        "configured",
        _one_task("force-start"),
        verbs.move,
    ),
    Verb(
        "halt",
        "/odw halt [reason]",
        "stop starting work; running stages finish",
        "/odw halt flaky runners",
        "configured",
        _halt,
        verbs.move,
    ),
    Verb("resume", "/odw resume", "undo a halt", "/odw resume", "configured", _resume, verbs.move),
    Verb(
        "recover",
        "/odw recover [assess|review|continue] [ID]",
        "continue a task from its kept work at the stage its ExecPlan's Status names "
        "(`recover ID`; after the run ended, in a new run); without an id, a fresh "
        "launch over surviving branches in that mode (default assess)",
        "/odw recover 1.2.3",
        "configured",
        _recover,
        verbs.recover,
    ),
    Verb(
        "assess",
        "/odw assess ID",
        "assess a task's surviving branch and report; changes nothing",
        "/odw assess 1.2.3",
        "configured",
        _assess,
        verbs.recover,
    ),
)

VERBS: dict[str, Verb] = {v.name: v for v in _ROWS}


def nearest_verb(word: str) -> str:
    """The verb `word` most resembles (`help` when nothing does)."""
    word = word.lower()
    scored = [(difflib.SequenceMatcher(None, word, v).ratio(), v) for v in VERBS]
    score, verb = max(scored)
    return verb if score >= 0.4 else "help"


def parse_line(line: str, *, default_task: str | None = None) -> Command:
    """Parse one `/odw ...` line, or raise CommandError with the nearest verb."""
    text = line.strip()
    rest = text[len(PREFIX) :]
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        first = rest.split()[0] if rest.split() else "help"
        raise CommandError(text, nearest_verb(first), f"cannot read the arguments: {exc}") from None
    if not words:
        raise CommandError(text, "help", "no verb given")
    name = words[0]
    verb = VERBS.get(name)
    if verb is None:
        near = nearest_verb(name)
        raise CommandError(text, near, f"unknown command {name!r}; did you mean `{near}`?")
    return verb.parse(_Args(name, text, words[1:], default_task))


def help_text(*, permission: str = "write") -> str:
    """`/odw help`: every verb of the table, with who may use it."""
    rows = [
        "| command | what it does | who | example |",
        "|---|---|---|---|",
    ]
    for v in _ROWS:
        who = "anyone who can read" if v.access == "read" else f"{permission} or above"
        rows.append(f"| `{v.usage}` | {v.summary} | {who} | `{v.example}` |")
    return "\n".join(rows)


def verbs_in_help(text: str) -> list[str]:
    """The verbs a help text lists (the first word after `/odw` in each usage cell)."""
    return re.findall(r"^\| `/odw ([a-z-]+)", text, flags=re.MULTILINE)
