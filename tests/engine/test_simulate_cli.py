"""`odw simulate` as a maintainer runs it: the seed scenarios and the error contract."""

from __future__ import annotations

import json

import pytest

CHAIN = (
    "## Phase 1\n"
    "- [ ] 1.1.1. First\n"
    "- [ ] 1.1.2. Second. Requires 1.1.1.\n"
    "- [ ] 1.1.3. Third. Requires 1.1.2.\n"
    "- [ ] 1.2.1. Independent\n"
)


@pytest.fixture
def simulate(run_odw, tmp_path):
    def go(scenario: dict, *flags: str):
        path = tmp_path / "scenario.json"
        path.write_text(json.dumps(scenario), encoding="utf-8")
        proc = run_odw("simulate", str(path), "--json", *flags)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    return go


def statuses(result: dict) -> dict[str, str]:
    return {r["id"]: r["status"] for r in result["results"]}


def test_failure_parks_dependents_and_stops_fan_out(simulate):
    r = simulate(
        {
            "roadmap": CHAIN,
            "config": {"maxParallel": 1},
            "outcomes": {"1.1.1": {"implement": ["no-marker"]}},
        }
    )
    assert statuses(r) == {
        "1.1.1": "failed",
        "1.1.2": "blocked",
        "1.1.3": "blocked",
        "1.2.1": "pending",
    }
    assert r["processed"] == [] and r["halted"]
    assert [a["id"] for a in r["assessments"]] == ["1.1.1"]


def test_infra_retry_then_success_lands(simulate):
    r = simulate({"roadmap": CHAIN, "outcomes": {"1.1.2": {"implement": ["crash", "pass"]}}})
    assert set(statuses(r).values()) == {"landed"}
    assert r["halted"] is None
    assert r["faultMetrics"] == {
        "infraRetries": 1,
        "infraFaults": 0,
        "providerFaults": 0,
        "authFaults": 0,
    }
    second = next(x for x in r["results"] if x["id"] == "1.1.2")
    assert second["attempts"]["implement"] == 2


def test_persistent_infra_gives_infra_fault_with_the_resume_hint(simulate):
    r = simulate(
        {
            "roadmap": CHAIN,
            "config": {"maxParallel": 1},
            "outcomes": {"1.1.1": {"plan": ["crash", "crash"]}},
        }
    )
    assert statuses(r)["1.1.1"] == "infra-fault"
    assert 'resumePartialBranches=true and resumeMode="continue"' in r["halted"]
    assert r["assessments"] == []
    assert r["faultMetrics"]["infraFaults"] == 1 and r["faultMetrics"]["infraRetries"] == 1


def test_provider_outage_defers_without_assessment(simulate):
    r = simulate({"roadmap": CHAIN, "outcomes": {"1.1.1": {"implement": ["provider:429"]}}})
    assert statuses(r)["1.1.1"] == "deferred"
    assert r["assessments"] == [] and r["faultMetrics"]["providerFaults"] == 1
    assert r["remediation"] != "flushed"


def test_auth_halts_everything(simulate):
    r = simulate({"roadmap": CHAIN, "outcomes": {"1.1.1": {"plan": ["auth"]}}})
    assert r["faultMetrics"]["authFaults"] == 1
    assert "auth" in r["halted"]
    assert r["processed"] == [] and r["assessments"] == []
    assert "landed" not in statuses(r).values()


def test_moving_fingerprint_never_exhausts_while_a_repeated_one_does(simulate):
    moving = [f"gate:build:error {w}" for w in ("alpha", "beta", "gamma", "delta", "epsilon")]
    r = simulate(
        {
            "roadmap": CHAIN,
            "config": {"gateRetryBudget": 1, "maxParallel": 1},
            "outcomes": {"1.1.1": {"implement": moving}},
        }
    )
    assert set(statuses(r).values()) == {"landed"}
    r = simulate(
        {
            "roadmap": CHAIN,
            "config": {"gateRetryBudget": 1, "maxParallel": 1},
            "outcomes": {"1.1.1": {"implement": ["gate:build:same"] * 5}},
        }
    )
    assert statuses(r)["1.1.1"] == "failed"
    assert "exhausted" in r["halted"]


def test_write_less_build_failure_routes_through_fix_and_back(simulate):
    r = simulate(
        {"roadmap": CHAIN, "outcomes": {"1.1.1": {"gates": ["gate:build:compile"]}}}, "--trace"
    )
    first = next(x for x in r["results"] if x["id"] == "1.1.1")
    assert first["status"] == "landed"
    assert first["attempts"]["fix"] == 1 and first["attempts"]["gates"] == 2
    kinds = [e["type"] for e in r["events"] if e.get("task") == "1.1.1"]
    assert kinds.index("ticket-opened") < kinds.index("ticket-closed")


def test_operator_retry_releases_parked_dependents(simulate):
    r = simulate(
        {
            "roadmap": CHAIN,
            "config": {"maxParallel": 1},
            "outcomes": {"1.1.1": {"implement": ["no-marker"]}},
            "commands": [{"after": 3, "move": "retry", "task": "1.1.1", "by": "ops"}],
        }
    )
    assert set(statuses(r).values()) == {"landed"}
    assert r["processed"][:3] == ["1.1.1", "1.1.2", "1.1.3"]


def test_human_output_and_trace(run_odw, tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"roadmap": CHAIN}), encoding="utf-8")
    proc = run_odw("simulate", str(path), "--trace")
    assert proc.returncode == 0
    assert "halted: no" in proc.stdout and "run-started" in proc.stdout


@pytest.mark.parametrize(
    ("scenario", "field"),
    [
        ({"roadmap": CHAIN, "config": {"maxParallel": 0}}, "scenario.config.maxParallel"),
        ({"roadmap": CHAIN, "config": {"stageAttempts": -1}}, "scenario.config.stageAttempts"),
        ({"config": {}}, "scenario.roadmap"),
        (
            {"roadmap": CHAIN, "outcomes": {"1.1.1": {"implement": ["explode"]}}},
            "scenario.outcomes",
        ),
        ({"roadmap": CHAIN, "outcomes": {"9.9.9": {"plan": ["pass"]}}}, "scenario.outcomes.9.9.9"),
        (
            {"roadmap": CHAIN, "commands": [{"after": 1, "move": "retry"}]},
            "scenario.commands[0].task",
        ),
        (
            {"roadmap": CHAIN, "commands": [{"after": 1, "move": "dance", "task": "1.1.1"}]},
            "scenario.commands[0].move",
        ),
        ({"roadmap": CHAIN, "extra": 1}, "scenario.extra"),
        ({"roadmap": "- [ ] 1.1. A\n- [ ] 1.1. B\n"}, "scenario.roadmap"),
    ],
    ids=[
        "parallel",
        "attempts",
        "no-roadmap",
        "bad-word",
        "unknown-task",
        "move-no-task",
        "bad-move",
        "unknown-key",
        "duplicate-ids",
    ],
)
def test_invalid_scenarios_exit_2_naming_the_field(run_odw, tmp_path, scenario, field):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(scenario), encoding="utf-8")
    proc = run_odw("simulate", str(path))
    assert proc.returncode == 2
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and field in lines[0]


def test_not_json_exits_2(run_odw, tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{nope", encoding="utf-8")
    proc = run_odw("simulate", str(path))
    assert proc.returncode == 2 and "not JSON" in proc.stderr


def test_missing_file_exits_1(run_odw, tmp_path):
    proc = run_odw("simulate", str(tmp_path / "absent.json"))
    assert proc.returncode == 1 and "cannot read scenario" in proc.stderr
