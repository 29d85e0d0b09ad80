"""Settings layering: odw.yml on the base < --config file < flags; errors name the field."""

from __future__ import annotations

import pytest

from app.local.settings import Overrides, SettingsError, configured_base, resolve


def test_layers_merge_config_keys_and_flags_win() -> None:
    repo = {
        "agent": "repo-agent",
        "gates": ["make test"],
        "config": {"maxParallel": 1, "stageAttempts": 3},
    }
    override = {"gates": ["true"], "config": {"maxParallel": 4}}
    s = resolve(repo, override, Overrides(agent="cli-agent"), base="main")
    assert s.agent == "cli-agent"
    assert s.gates == ("true",)
    assert s.config.max_parallel == 4 and s.config.stage_attempts == 3
    s = resolve(repo, override, Overrides(max_parallel=7), base="main")
    assert s.agent == "repo-agent" and s.config.max_parallel == 7


def test_errors_name_the_source_and_the_field() -> None:
    with pytest.raises(SettingsError, match=r"odw.yml on origin/main: config.stageAttempts"):
        resolve({"config": {"stageAttempts": 0}}, None, Overrides(agent="a"), base="main",
                repo_source=".github/odw.yml on origin/main")  # fmt: skip
    with pytest.raises(SettingsError, match=r"over.yml: .*unknownKey"):
        resolve({}, {"unknownKey": 1}, Overrides(agent="a"), base="main",
                override_source="over.yml")  # fmt: skip
    with pytest.raises(SettingsError, match=r"command line: config.maxParallel"):
        resolve({}, None, Overrides(agent="a", max_parallel=0), base="main")
    with pytest.raises(SettingsError, match="no agent command"):
        resolve({"agent": "  "}, None, Overrides(), base="main")


def test_only_an_explicit_base_counts() -> None:
    assert configured_base({"base": "trunk"}) == "trunk"
    assert configured_base({}) is None
