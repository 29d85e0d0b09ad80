"""The command grammar: what each verb accepts, what a mistake answers, and
that `/odw help` lists exactly the verbs the parser takes."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.commands.grammar import VERBS, CommandError, help_text, parse_line, verbs_in_help


def test_help_lists_exactly_the_verbs_the_parser_accepts() -> None:
    listed = verbs_in_help(help_text())
    assert len(listed) == len(set(listed))
    for verb in listed:
        row = VERBS[verb]
        # each listed example parses (on a task PR, where the id may be implied)
        assert parse_line(row.example, default_task="1.2.3").verb == verb
    accepted = set()
    for word in sorted({*listed, "merge", "approve", "cancel", "stop", "restart", "land"}):
        try:
            parse_line(f"/odw {word}", default_task="1.2.3")
            accepted.add(word)
        except CommandError as exc:
            if exc.problem.startswith("unknown command"):
                continue
            accepted.add(word)  # known verb, bad arguments
    assert accepted == set(listed)


def test_help_names_the_configured_level_for_commands_that_change_things() -> None:
    text = help_text(permission="maintain")
    assert "| `/odw retry ID` |" in text
    retry = next(line for line in text.splitlines() if "/odw retry" in line)
    status = next(line for line in text.splitlines() if "/odw status" in line)
    assert "maintain or above" in retry
    assert "anyone who can read" in status


@pytest.mark.parametrize(
    ("line", "default", "expected"),
    [
        ("/odw retry 1.2.3", None, {"verb": "retry", "task": "1.2.3"}),
        ("/odw retry", "4.5", {"verb": "retry", "task": "4.5"}),
        ("/odw status", None, {"verb": "status", "task": None}),
        ("/odw status", "2.1", {"verb": "status", "task": "2.1"}),
        (
            "/odw run --dry-run --task 1.2 --max-parallel 3",
            None,
            {"verb": "run", "dry_run": True, "task": "1.2", "max_parallel": 3},
        ),
        ("/odw run", "9.9", {"verb": "run", "task": None, "dry_run": False}),
        (
            '/odw complete 1.2.3 --reason "fixed by hand, see #4"',
            None,
            {"verb": "complete", "task": "1.2.3", "reason": "fixed by hand, see #4"},
        ),
        ("/odw complete --reason done", "3.1", {"verb": "complete", "task": "3.1"}),
        ("/odw halt flaky runners today", None, {"verb": "halt", "reason": "flaky runners today"}),
        ("/odw halt", None, {"verb": "halt", "reason": ""}),
        ("/odw resume", None, {"verb": "resume"}),
        ("/odw recover", None, {"verb": "recover", "mode": "assess", "task": None}),
        ("/odw recover continue 1.2", None, {"verb": "recover", "mode": "continue", "task": "1.2"}),
        ("/odw recover 1.2", None, {"verb": "recover", "mode": "continue", "task": "1.2"}),
        ("/odw assess 1.2", None, {"verb": "assess", "task": "1.2", "mode": "assess"}),
        ("/odw force-start 7.1", None, {"verb": "force-start", "task": "7.1"}),
        (
            '/odw rearm 1.2 stageAttempts=3 gateRetryBudget.build=4 instructions="use the v2 API"',
            None,
            {
                "verb": "rearm",
                "task": "1.2",
                "overrides": {
                    "stageAttempts": 3,
                    "gateRetryBudget": {"build": 4},
                    "instructions": "use the v2 API",
                },
            },
        ),
        (
            """/odw rearm 1.2 routeBudget='{"fix": 3}'""",
            None,
            {"verb": "rearm", "overrides": {"routeBudget": {"fix": 3}}},
        ),
        ("/odw rearm stageAttempts=2", "5.5", {"verb": "rearm", "task": "5.5"}),
    ],
    ids=[
        "retry-with-id",
        "retry-id-from-task-pr",
        "status-of-run",
        "status-of-pr-task",
        "run-all-options",
        "run-never-narrowed-by-pr",
        "complete-quoted-reason",
        "complete-id-from-task-pr",
        "halt-with-reason",
        "halt-bare",
        "resume",
        "recover-default-mode",
        "recover-continue-one-task",
        "recover-id-only",
        "assess",
        "force-start",
        "rearm-overrides",
        "rearm-json-value",
        "rearm-id-from-task-pr",
    ],
)
def test_commands_parse(line: str, default: str | None, expected: dict[str, object]) -> None:
    command = parse_line(line, default_task=default)
    for name, value in expected.items():
        assert getattr(command, name) == value, name


@pytest.mark.parametrize(
    ("line", "verb", "says"),
    [
        ("/odw retyr 1.2", "retry", "did you mean `retry`"),
        ("/odw stauts", "status", "did you mean `status`"),
        ("/odw xyzzyqq", "help", "unknown command"),
        ("/odw", "help", "no verb"),
        ("/odw retry", "retry", "task id is needed"),
        ("/odw retry one", "retry", "not a task id"),
        ("/odw retry 1.2 1.3", "retry", "unexpected '1.3'"),
        ("/odw run --max-parallel 0", "run", "1 to 64"),
        ("/odw run --fast", "run", "unexpected '--fast'"),
        ("/odw complete 1.2", "complete", "reason is needed"),
        ('/odw complete 1.2 --reason "unclosed', "complete", "cannot read"),
        ("/odw rearm 1.2 bogus=1", "rearm", "rearm.bogus: unknown field"),
        ("/odw rearm 1.2 gateRetryBudget.bulid=5", "rearm", "rearm.gateRetryBudget"),
        ("/odw rearm 1.2 stageAttempts=99", "rearm", "rearm.stageAttempts"),
        ("/odw rearm 1.2 notkv", "rearm", "not key=value"),
        ("/odw recover sideways", "recover", "not a recovery mode"),
        ("/odw resume now", "resume", "unexpected"),
    ],
    ids=[
        "typo-retry",
        "typo-status",
        "nonsense",
        "no-verb",
        "retry-without-id-off-task-pr",
        "retry-bad-id",
        "retry-extra-word",
        "run-parallel-zero",
        "run-unknown-flag",
        "complete-without-reason",
        "unclosed-quote",
        "rearm-unknown-override",
        "rearm-unknown-gate-core-rule",
        "rearm-over-limit-core-rule",
        "rearm-not-key-value",
        "recover-bad-mode",
        "resume-extra",
    ],
)
def test_mistakes_answer_the_nearest_usage(line: str, verb: str, says: str) -> None:
    with pytest.raises(CommandError) as caught:
        parse_line(line)
    assert caught.value.verb == verb
    assert says in caught.value.problem
    assert caught.value.usage == VERBS[verb].usage


def test_the_readme_commands_table_is_the_generated_help() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    start, end = "<!-- odw-help:start -->\n", "\n<!-- odw-help:end -->"
    shown = readme.split(start, 1)[1].split(end, 1)[0]
    assert shown == help_text(), "README.md's Commands table differs from /odw help; paste it"
