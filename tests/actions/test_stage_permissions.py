"""The stage workflow `odw init` writes: each stage runs in exactly one job,
write stages with `contents: write`, every other stage with `contents: read`,
and only a `workflow_dispatch` (which only the App, holding `actions: write`,
sends) starts it: no pull request event, so a fork's pull request never runs
it with a token or secrets."""

from __future__ import annotations

import re

import pytest
import yaml

from app.cli.init_cmd import render_workflow
from app.core.verdict import WRITE_STAGES

WORKFLOW = yaml.safe_load(render_workflow("octo/odw@v1", 30))
STAGES = WORKFLOW[True]["workflow_dispatch"]["inputs"]["stage"]["options"]


def _jobs_running(stage: str) -> list[str]:
    return [
        name
        for name, job in WORKFLOW["jobs"].items()
        if stage in re.findall(r"inputs\.stage == '([\w-]+)'", job.get("if", ""))
    ]


@pytest.mark.parametrize("stage", STAGES, ids=STAGES)
def test_each_stage_runs_with_the_least_contents_permission(stage: str) -> None:
    (job,) = _jobs_running(stage)
    permissions = WORKFLOW["jobs"][job]["permissions"]
    expected = "write" if stage in WRITE_STAGES else "read"
    assert permissions == {"contents": expected}


def test_the_stage_workflow_grants_nothing_by_default_and_starts_only_on_dispatch() -> None:
    assert WORKFLOW["permissions"] == {}
    assert set(WORKFLOW[True]) == {"workflow_dispatch"}
