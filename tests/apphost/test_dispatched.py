"""The rule of which workflow runs are ODW's own (`app/apphost/dispatched.py`)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from app.apphost.dispatched import (
    AmbiguousRun,
    Expected,
    rejection,
    resolve,
    run_tag,
    tag_key,
)
from app.github.protocols import WorkflowRun

BOT = "odw[bot]"
KEY = tag_key("-----BEGIN PRIVATE KEY-----\nodw\n-----END PRIVATE KEY-----\n")
TOKEN = "0123456789abcdef0123456789abcdef"
TAG = run_tag(KEY, TOKEN)
EXPECTED = Expected("octo/demo", "roadmap-1-1", run_id=77)
OURS = WorkflowRun(
    id=77,
    name="odw-stage",
    display_title=f"odw plan 1.1 {TAG} (run r1)",
    event="workflow_dispatch",
    status="completed",
    conclusion="success",
    run_attempt=1,
    head_branch="roadmap-1-1",
    head_sha="a" * 40,
    path=".github/workflows/odw-stage.yml@roadmap-1-1",
    html_url="https://github.com/octo/demo/actions/runs/77",
    head_repository="octo/demo",
    triggering_actor=BOT,
    created_at=1000.0,
)


def test_the_run_recorded_at_dispatch_is_accepted() -> None:
    assert rejection(OURS, EXPECTED) is None
    assert rejection(replace(OURS, path=".github/workflows/odw-stage.yml"), EXPECTED) is None


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"id": 78}, "not the run id recorded at dispatch"),
        ({"path": ".github/workflows/odw-stage.yml.yml"}, "its workflow is"),
        ({"path": ".github/workflows/odw-stage.yml.yml@roadmap-1-1"}, "its workflow is"),
        ({"path": "evil/.github/workflows/odw-stage.yml"}, "its workflow is"),
        ({"path": ".github/workflows/other.yml"}, "its workflow is"),
        ({"event": "push"}, "started by 'push'"),
        ({"head_branch": "roadmap-1-1-x"}, "not the task branch"),
        ({"head_branch": None}, "not the task branch"),
        ({"head_repository": "mallory/demo"}, "not octo/demo"),
        ({"head_repository": None}, "not octo/demo"),
    ],
    ids=[
        "foreign-run-id",
        "workflow-file-yml-yml",
        "workflow-file-yml-yml-at-ref",
        "workflow-in-another-directory",
        "another-workflow",
        "not-a-dispatch",
        "another-branch",
        "no-branch",
        "a-fork",
        "no-head-repository",
    ],
)
def test_each_mismatch_rejects_the_run_with_its_reason(change: dict[str, object], why: str) -> None:
    reason = rejection(replace(OURS, **change), EXPECTED)  # type: ignore[arg-type]
    assert reason is not None and why in reason


def test_nothing_is_accepted_for_an_attempt_that_recorded_no_run() -> None:
    reason = rejection(OURS, replace(EXPECTED, run_id=None))
    assert reason is not None and "recorded at dispatch (none)" in reason


def test_the_run_name_shows_a_keyed_hash_that_reveals_and_proves_nothing_without_the_key() -> None:
    assert TOKEN not in OURS.display_title
    assert run_tag(KEY, TOKEN) == TAG  # ODW recomputes it
    assert run_tag(tag_key("another key"), TOKEN) != TAG  # nobody else can
    assert run_tag(KEY, TOKEN[:-1] + "0") != TAG


def _resolve(*runs: WorkflowRun, since: float | None = 990.0) -> WorkflowRun | None:
    return resolve(runs, replace(EXPECTED, run_id=None), tag=TAG, since=since, bot=BOT)


def test_ghes_resolution_takes_the_bots_dispatch_on_the_task_branch_showing_the_tag() -> None:
    writers = replace(OURS, id=80, triggering_actor="wanda")
    elsewhere = replace(OURS, id=81, head_branch="feature")
    copy_file = replace(OURS, id=82, path=".github/workflows/odw-stage.yml.yml")
    older = replace(OURS, id=83, created_at=900.0)
    other_attempt = replace(OURS, id=84, display_title="odw plan 1.1 0000 (run r1)")
    assert _resolve(writers, elsewhere, copy_file, older, other_attempt) is None
    assert _resolve(writers, OURS, elsewhere, copy_file, older, other_attempt) == OURS


def test_ghes_resolution_allows_for_clock_skew_but_not_an_old_run() -> None:
    assert _resolve(replace(OURS, created_at=975.0)) is not None
    assert _resolve(replace(OURS, created_at=950.0)) is None
    assert _resolve(replace(OURS, created_at=900.0), since=None) is not None


def test_a_second_candidate_is_ambiguous_never_a_guess() -> None:
    with pytest.raises(AmbiguousRun, match="77, 78"):
        _resolve(OURS, replace(OURS, id=78))
