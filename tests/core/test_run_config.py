"""RunConfig: seed names in JSON, defaults, and rejections that name the field."""

from __future__ import annotations

import pytest

from app.core.config import ConfigError, RunConfig, load_config


def test_defaults_and_json_names():
    data = RunConfig().to_json()
    assert data["stageAttempts"] == 2
    assert data["maxDesignRounds"] == 4
    assert data["maxReviewRounds"] == 3
    assert data["assessPartialBranches"] is True
    assert data["resumeMode"] == "assess"
    assert data["resumeMaxCandidates"] == 4
    assert set(data) == {
        "maxParallel",
        "stageAttempts",
        "maxDesignRounds",
        "maxReviewRounds",
        "gateRetryBudget",
        "routeBudget",
        "autoMerge",
        "dryRun",
        "assessPartialBranches",
        "resumePartialBranches",
        "resumeMode",
        "resumeTaskId",
        "resumeMaxCandidates",
        "stageDeadlines",
        "externalMet",
    }
    assert load_config(data) == RunConfig()


def test_per_gate_budget_mapping_and_route_budget_per_stage():
    cfg = load_config({"gateRetryBudget": {"build": 5}, "routeBudget": {"gates": 1}})
    assert cfg.gate_budget("build") == 5
    assert cfg.gate_budget("review") == 2
    assert cfg.route_budget_for("gates") == 1
    assert load_config({"stageDeadlines": {"implement": 60}}).deadline("implement") == 60


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"maxParallel": 0}, "config.maxParallel"),
        ({"stageAttempts": "two"}, "config.stageAttempts"),
        ({"gateRetryBudget": {"bogus": 1}}, "config.gateRetryBudget"),
        ({"gateRetryBudget": -1}, "config.gateRetryBudget"),
        ({"routeBudget": {"deploy": 1}}, "config.routeBudget"),
        ({"resumeMode": "yolo"}, "config.resumeMode"),
        ({"resumeTaskId": "abc"}, "config.resumeTaskId"),
        ({"stageDeadlines": {"plan": 0}}, "config.stageDeadlines.plan"),
        ({"maxParalel": 2}, "config.maxParalel"),
    ],
    ids=[
        "zero-parallel",
        "text-attempts",
        "unknown-gate",
        "negative-budget",
        "unknown-stage",
        "bad-mode",
        "bad-task-id",
        "zero-deadline",
        "typo",
    ],
)
def test_invalid_values_are_rejected_naming_the_field(data, field):
    with pytest.raises(ConfigError) as err:
        load_config(data)
    assert str(err.value).startswith(field + ":")
