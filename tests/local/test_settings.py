"""Settings layering: odw.yml on the base < --config file < flags; errors name the field."""

from __future__ import annotations

import pytest

from app.local.run_options import Overrides, SettingsError, configured_base, read_layer, resolve


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


def test_a_file_layer_names_its_line_and_holds_only_the_keys_it_sets() -> None:
    with pytest.raises(
        SettingsError, match=r"^\.github/odw\.yml on origin/main, line 3: config\.maxParallel: "
    ):
        read_layer("agent: a\nconfig:\n  maxParallel: 0\n", ".github/odw.yml on origin/main")
    layer = read_layer("agent: a\nconfig:\n  maxParallel: 3\n", "over.yml")
    assert layer == {"agent": "a", "config": {"maxParallel": 3}}  # merged key by key
    assert configured_base(layer) is None
    assert configured_base(read_layer("base: trunk\n", "over.yml")) == "trunk"
    assert read_layer(None, "no file") == {}
