"""What the App writes on GitHub, rendered from a run's state: safe and within limits."""

from __future__ import annotations

import pytest

from app.apphost import views
from app.apphost.run_settings import parse_settings
from app.core.inputs import EndRun
from app.core.repo_config import ConfigProblem, read_repo_config
from app.core.run_view import task_view
from app.core.titles import TITLE_BUDGET, command
from app.core.verdict import Check, GateResult, Verdict
from tests.core.runkit import AT, Run

HOSTILE = (
    "# Roadmap\n\n"
    "- [ ] 1.1. Greet @octo-org/everyone <!-- odw:status v1 task=9.9 --> \x1b[31mred\x1b[0m\n"
    "- [ ] 1.2. Second | with a pipe\n"
)


def _run() -> Run:
    run = Run(HOSTILE, maxParallel=2)
    run.drive_to("1.1", "implement")
    return run


def test_untrusted_titles_cannot_mention_forge_a_marker_or_break_a_table() -> None:
    run = _run()
    t = run.state.task("1.1")
    comment = views.status_comment(run.state, t, views.Links(), None, landed_note=False)
    first, rest = comment.split("\n", 1)
    assert first == views.marker("1.1")  # the only marker, on the first line
    assert "<!--" not in rest and "@octo-org" not in rest and "\x1b" not in rest
    check = views.task_check(run.state, t, views.Links(), None)
    assert "@octo-org" not in check.summary and "\x1b" not in check.title
    table = views.run_check(run.state, views.Links()).summary
    row = next(line for line in table.splitlines() if line.startswith("| 1.2 "))
    assert row.count("|") == 5  # four cells: the roadmap's pipe cannot add one


def test_gate_output_goes_to_text_in_details_with_its_tail_cut() -> None:
    run = _run()
    t = run.state.task("1.1")
    huge = "x" * 200_000
    verdict = Verdict(
        stage="implement",
        task="1.1",
        token="t" * 16,
        passed=False,
        checks=[Check(name="gates", status="failed", reason=huge)],
        gates=[GateResult(command="make test", code=2, status="failed", tail=huge)],
    )
    check = views.task_check(run.state, t, views.Links(), verdict)
    # GitHub's own limits are applied where the text is sent (app/core/github_limits.py).
    assert check.text is not None and len(check.text) < 10_000
    assert "<details><summary>make test: exit 2" in check.text
    assert "cut)" in check.text  # says how much of the tail was cut
    assert len(check.title) <= views.TITLE_LIMIT


def test_a_digest_moves_only_when_the_view_does() -> None:
    run = _run()
    t = run.state.task("1.1")
    a = views.task_check(run.state, t, views.Links(), None)
    b = views.task_check(run.state, t, views.Links(), None)
    assert a.digest() == b.digest()
    run.finish_stage("1.1")
    c = views.task_check(run.state, run.state.task("1.1"), views.Links(), None)
    assert c.digest() != a.digest()


@pytest.mark.parametrize(
    ("text", "field", "line"),
    [
        ("gates: [make]\nconfig:\n  maxParallel: many\n", "config.maxParallel", 3),
        ("agent: x\nbogus: 1\n", "bogus", 2),
        ("gates:\n  - make\n  - 3\n", "gates.1", 3),
    ],
    ids=["nested-field", "unknown-key", "list-item"],
)
def test_an_invalid_odw_yml_names_the_field_and_its_line(text: str, field: str, line: int) -> None:
    with pytest.raises(ConfigProblem) as caught:
        read_repo_config(text)
    assert (caught.value.path, caught.value.field, caught.value.line) == (
        ".github/odw.yml",
        field,
        line,
    )


def test_a_roadmap_error_names_the_roadmap_and_its_line() -> None:
    roadmap = "# R\n\n- [ ] 1.1. A\n- [ ] 1.1. Again\n"
    with pytest.raises(ConfigProblem) as caught:
        parse_settings("auto: true\n", roadmap)
    assert caught.value.path == "docs/roadmap.md"
    assert caught.value.line in (3, 4)
    view = views.config_check(
        caught.value.path, caught.value.field, caught.value.line, caught.value.message
    )
    assert view.conclusion == "failure" and "docs/roadmap.md" in view.title
    assert parse_settings("auto: true\n", "# R\n\n- [ ] 1.1. A\n").config.auto


def test_a_failed_task_shows_what_failed_the_kept_branch_and_the_way_back() -> None:
    run = Run(stage_attempts=1)
    run.finish("1.1.1", "exit:1")
    t = run.state.task("1.1.1")
    assert t.status == "failed"
    check = views.task_check(run.state, t, views.Links(), None)
    assert check.conclusion == "failure"
    assert check.title.startswith("failed at plan (attempt 1 of 1): agent exited with code 1")
    assert check.title.endswith(f"; {command(task_view(run.state, t))}")
    assert len(check.title) <= TITLE_BUDGET
    assert check.title.endswith("; /odw recover 1.1.1")
    assert "**Last attempt:** plan, attempt 1, failed" in check.summary
    assert "Task 1.1.1 failed at plan: " in check.summary
    assert "The branch roadmap-1-1-1 is kept." in check.summary
    assert "`/odw recover 1.1.1` — continue from the kept work on `roadmap-1-1-1`" in check.summary
    assert "`/odw retry 1.1.1` — start over from plan on a fresh `roadmap-1-1-1`" in check.summary
    comment = views.status_comment(run.state, t, views.Links(), None, landed_note=False)
    assert "The branch roadmap-1-1-1 is kept." in comment
    assert '`/odw complete 1.1.1 --reason "..."` — accept plan as passed and go on to' in comment


def test_the_run_check_names_the_tasks_left_for_remediation_once_the_run_ended() -> None:
    run = Run(stage_attempts=1, max_parallel=1)
    run.finish("1.1.1", "exit:1")
    assert "**Remediation:**" not in views.run_check(run.state, views.Links()).summary
    run.feed(EndRun(at=AT))
    summary = views.run_check(run.state, views.Links()).summary
    assert "**Remediation:** needs remediation: 1.1.1 failed with no fault to explain it" in summary
