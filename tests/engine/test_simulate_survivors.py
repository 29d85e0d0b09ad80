"""`odw simulate` with `survivors`: rehearsing fresh-launch recovery end to end."""

from __future__ import annotations

import json
import re

import pytest

from app.engine.scenario import ScenarioError, load_scenario

CHAIN = (
    "## Phase 1\n"
    "- [ ] 1.1.1. First\n"
    "- [ ] 1.1.2. Second. Requires 1.1.1.\n"
    "- [ ] 1.2.1. Independent\n"
)
COMPLETE = {
    "clean": True,
    "commits": 2,
    "taskScoped": True,
    "execplan": "Status: COMPLETE\n",
    "validation": ["make test passed at the head"],
}


def rehearse(run_odw, tmp_path, scenario: dict) -> dict:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    proc = run_odw("simulate", str(path), "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_review_mode_rehearsal_resumes_the_survivor_and_lands_its_dependent(run_odw, tmp_path):
    r = rehearse(
        run_odw,
        tmp_path,
        {
            "roadmap": CHAIN,
            "config": {"resumePartialBranches": True, "resumeMode": "review"},
            "assessments": {"1.1.1": "adopt-complete"},
            "survivors": [{"branch": "roadmap-1-1-1", "evidence": COMPLETE}, {"branch": "wip"}],
        },
    )
    first = next(t for t in r["results"] if t["id"] == "1.1.1")
    assert first["status"] == "landed"
    assert set(first["attempts"]) == {"review", "integrate"}  # implementation not re-run
    assert sorted(r["processed"]) == ["1.1.1", "1.1.2", "1.2.1"]
    assert r["recovery"]["resumed"] == 1 and r["recovery"]["unresolved"] == []
    assert r["recovery"]["skipped"] == [{"branch": "wip", "reason": "unmapped-branch"}]
    assert r["halted"] is None


def test_evidence_that_does_not_say_clean_is_dirty(run_odw, tmp_path):
    unknown = {k: v for k, v in COMPLETE.items() if k != "clean"}
    r = rehearse(
        run_odw,
        tmp_path,
        {
            "roadmap": CHAIN,
            "config": {"resumePartialBranches": True, "resumeMode": "continue"},
            "survivors": [{"branch": "roadmap-1-1-1", "evidence": unknown}],
        },
    )
    assert r["recovery"]["resumed"] == 0
    assert [(u["id"], u["reason"]) for u in r["recovery"]["unresolved"]] == [
        ("1.1.1", "dirty-worktree")
    ]


def test_held_survivor_rehearsal_reports_needs_operator_recovery(run_odw, tmp_path):
    r = rehearse(run_odw, tmp_path, {"roadmap": CHAIN, "survivors": [{"branch": "roadmap-1-1-1"}]})
    assert r["processed"] == ["1.2.1"]
    assert r["halted"].startswith("needs-operator-recovery")
    assert [u["id"] for u in r["recovery"]["unresolved"]] == ["1.1.1"]


@pytest.mark.parametrize(
    ("survivors", "message"),
    [
        (
            [{"branch": "roadmap-1-1-1", "evidence": {"commits": -1}}],
            "survivors[0].evidence.commits",
        ),
        ([{"branch": "roadmap-1-1-1", "colour": "red"}], "survivors[0].colour: unknown field"),
        ([{"branch": "roadmap-1-1-1"}, {"branch": "roadmap-1-1-1"}], "listed twice"),
    ],
    ids=["negative-commits", "unknown-field", "branch-twice"],
)
def test_bad_survivors_are_rejected_naming_the_field(survivors, message):
    with pytest.raises(ScenarioError, match=re.escape(message)):
        load_scenario(json.dumps({"roadmap": CHAIN, "survivors": survivors}))
