"""`odw run --local` end to end: real git, the scripted agent, the real engine."""

from __future__ import annotations

import pytest

from tests.local.conftest import FAST, result_of
from tests.support import git

pytestmark = pytest.mark.slow

SIX = """\
# Roadmap

## 1. Chain

- [ ] 1.1. Lay the foundation
- [ ] 1.2. Build the walls
  - Requires 1.1.
- [ ] 1.3. Put on the roof
  - Requires 1.2.

## 2. Independent

- [ ] 2.1. Paint the fence
- [ ] 2.2. Plant a tree
- [ ] 2.3. Water the tree
  - Requires 2.2.
"""

DEPENDS = {"1.2": ["1.1"], "1.3": ["1.2"], "2.3": ["2.2"]}


def test_six_tasks_land_each_as_one_squash_commit_in_dependency_order(project_factory) -> None:
    p = project_factory(SIX, {"config": {"maxParallel": 3, **FAST}})
    head_before = git(p.clone, "rev-parse", "HEAD")

    code, data, stderr = p.run_json()

    assert code == 0, stderr
    assert sorted(data["processed"]) == ["1.1", "1.2", "1.3", "2.1", "2.2", "2.3"]
    assert data["halted"] is None
    assert {r["status"] for r in data["results"]} == {"landed"}
    landings = p.landings()
    assert sorted(landings) == sorted(data["processed"])
    assert all(n == 1 for n in p.landing_counts().values())
    for task, deps in DEPENDS.items():
        for dep in deps:
            assert landings.index(dep) < landings.index(task), landings
    roadmap = p.roadmap_on_origin()
    for task in data["processed"]:
        assert f"- [x] {task}." in roadmap
    # Each landing is exactly one commit on the base: history is linear, one per task.
    subjects = git(p.origin, "log", "--format=%s", "main").splitlines()
    assert len(subjects) == 7
    # The dual review ran both lanes, and the gates stage ran for every task.
    attempts = result_of(data, "1.3")["attempts"]
    assert attempts["review"] == 2 and attempts["gates"] == 1
    # PATH's working tree and checked-out branch are untouched.
    assert git(p.clone, "status", "--porcelain") == ""
    assert git(p.clone, "rev-parse", "HEAD") == head_before
    assert git(p.clone, "branch", "--show-current").strip() == "main"


def test_missing_marker_fails_the_task_parks_dependents_and_keeps_the_branch(
    project_factory,
) -> None:
    roadmap = """\
## 1. Work

- [ ] 1.1. First
- [ ] 1.2. Second
  - Requires 1.1.
- [ ] 1.3. Third
  - Requires 1.2.
- [ ] 1.4. Unrelated
"""
    p = project_factory(roadmap, {"config": {"maxParallel": 1, **FAST}})
    p.set_script({"1.2": {"implement": ["no-marker"]}})

    code, data, stderr = p.run_json()

    assert code == 1
    assert data["processed"] == ["1.1"]
    assert "task 1.2 " not in stderr  # with --json, the views are not printed
    failed = result_of(data, "1.2")
    assert failed["status"] == "failed" and failed["stage"] == "implement"
    checks = {c["name"]: c["status"] for c in failed["verdict"]["checks"]}
    assert checks["completion_marker"] == "failed"
    assert checks["exit_code"] == "passed"
    assert result_of(data, "1.3")["status"] == "blocked"
    assert result_of(data, "1.4")["status"] == "pending"
    assert data["halted"] and "1.2" in data["halted"]
    assert "roadmap-1-2" in p.origin_branches()
    assert p.landings() == ["1.1"]
    # The surviving branch was assessed from host evidence, and its dirty ExecPlan
    # (the agent set it COMPLETE without finishing) was salvaged onto it.
    assessment = failed["assessment"]
    assert assessment["classification"] == "adopt-partial"
    assert failed["salvage"]["committed"] == ["docs/execplans/1-2.md"]
    plan = git(p.origin, "show", "roadmap-1-2:docs/execplans/1-2.md")
    assert "Status: COMPLETE" in plan
    author = git(p.origin, "log", "-1", "--format=%an", "roadmap-1-2").strip()
    assert author == "odw-runner"

    # A new run holds the surviving branch out of selection, reports it, and does
    # not call the blocked frontier a clean stop.
    code2, again, _ = p.run_json()
    assert code2 == 1
    assert again["processed"] == ["1.4"]
    assert again["halted"].startswith("needs-operator-recovery: 1 surviving branch(es)")
    assert {"id": "1.2", "reason": "surviving branch roadmap-1-2 on origin"} in again["held"]


def test_a_hanging_agent_is_an_infra_fault_retried_up_to_stage_attempts(project_factory) -> None:
    roadmap = """\
## 1. Work

- [ ] 1.1. Hangs once
- [ ] 1.2. Hangs every time
"""
    config = {"maxParallel": 2, "stageAttempts": 2, **FAST}
    config["stageDeadlines"] = {**FAST["stageDeadlines"], "implement": 3}
    p = project_factory(roadmap, {"config": config})
    p.set_script({"1.1": {"implement": ["hang"]}, "1.2": {"implement": ["hang", "hang"]}})

    code, data, _ = p.run_json()

    assert code == 1
    once = result_of(data, "1.1")
    assert once["status"] == "landed" and once["attempts"]["implement"] == 2
    always = result_of(data, "1.2")
    assert always["status"] == "infra-fault" and always["stage"] == "implement"
    assert always["attempts"]["implement"] == 2
    assert "resumeMode" in always["detail"]
    assert data["faultMetrics"]["infraRetries"] == 2
    assert data["faultMetrics"]["infraFaults"] == 1
    assert "assessment" not in always  # infra faults are not assessed
    assert p.landings() == ["1.1"]


def test_a_failing_gate_routes_through_fix_and_fails_the_task_at_gates(project_factory) -> None:
    roadmap = "## 1. Work\n\n- [ ] 1.1. Needs a file nobody writes\n"
    odw = {"gates": ["test -f work/never-written.txt"], "config": {"routeBudget": 1, **FAST}}
    p = project_factory(roadmap, odw)

    code, data, _ = p.run_json()

    assert code == 1
    task = result_of(data, "1.1")
    assert task["status"] == "failed" and task["stage"] == "gates"
    assert "route budget exhausted" in task["detail"]
    assert task["attempts"]["gates"] == 2 and task["attempts"]["fix"] == 1
    assert task["verdict"]["outcome"] == "gate"
    assert "test -f work/never-written.txt" in task["verdict"]["detail"]
    assert p.landings() == []
    assert "roadmap-1-1" in p.origin_branches()


def test_passing_gates_are_run_on_the_task_branch(project_factory) -> None:
    roadmap = "## 1. Work\n\n- [ ] 1.1. Writes its file\n"
    p = project_factory(roadmap, {"gates": ["test -f work/1-1.txt"], "config": FAST})

    code, data, _ = p.run_json()

    assert code == 0
    assert data["processed"] == ["1.1"]
    assert git(p.origin, "show", "main:work/1-1.txt").startswith("task 1.1 done")
