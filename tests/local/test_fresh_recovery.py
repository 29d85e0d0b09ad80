"""Fresh-launch recovery end to end: a failed run's branch blocks, then is resumed."""

from __future__ import annotations

import json

import pytest

from tests.local.conftest import FAST, result_of
from tests.support import git

pytestmark = pytest.mark.slow

ROADMAP = "## 1. Work\n\n- [ ] 1.1. Only task\n"


def test_a_surviving_branch_halts_reruns_until_continue_mode_resumes_and_lands_it(
    project_factory, tmp_path
) -> None:
    p = project_factory(ROADMAP, {"config": FAST})
    p.set_script({"1.1": {"implement": ["no-marker"]}})

    code, first, _ = p.run_json()
    assert code == 1 and result_of(first, "1.1")["status"] == "failed"
    assert "roadmap-1-1" in p.origin_branches()
    assert first["recovery"] is None  # no survivors when it started

    # A plain relaunch holds the survivor and says so instead of a clean stop.
    code, held, _ = p.run_json()
    assert code == 1
    assert held["processed"] == []
    assert held["halted"].startswith("needs-operator-recovery: 1 surviving branch(es)")
    assert "1.1 (roadmap-1-1" in held["halted"]
    assert "resumePartialBranches=true" in held["halted"]
    (row,) = held["recovery"]["unresolved"]
    assert (row["id"], row["branch"], row["action"]) == ("1.1", "roadmap-1-1", "hold")
    assert p.landings() == []

    # Relaunch with continue mode: the committed ExecPlan (salvaged as COMPLETE by
    # the first run) sends the branch straight to dual review, and it lands.
    plan = git(p.origin, "show", "roadmap-1-1:docs/execplans/1-1.md")
    assert "Status: COMPLETE" in plan
    override = tmp_path / "resume.json"
    override.write_text(
        json.dumps({"config": {**FAST, "resumePartialBranches": True, "resumeMode": "continue"}})
    )
    code, resumed, stderr = p.run_json("--config", str(override))
    assert code == 0, stderr
    assert resumed["processed"] == ["1.1"]
    assert resumed["halted"] is None
    rec = resumed["recovery"]
    assert (rec["candidates"], rec["assessed"], rec["resumed"]) == (1, 0, 1)
    assert rec["results"] == [
        {
            "id": "1.1",
            "branch": "roadmap-1-1",
            "classification": "continue-manual",
            "action": "resume",
            "stage": "review",
        }
    ]
    assert rec["unresolved"] == []
    task = result_of(resumed, "1.1")
    assert task["status"] == "landed"
    assert set(task["attempts"]) == {"review", "integrate"}  # nothing re-planned or re-implemented
    assert p.landings() == ["1.1"]
    assert "- [x] 1.1." in p.roadmap_on_origin()
