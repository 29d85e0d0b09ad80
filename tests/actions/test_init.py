"""`odw init` output, checked by GitHub's published schemas and actionlint."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from app.core.config import RunConfig
from app.core.repo_config import parse_repo_config
from tests.conftest import REPO_ROOT

BIN = Path(sys.executable).parent


def tool(name: str) -> str:
    found = BIN / name
    if found.exists():
        return str(found)
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed (it is a dev dependency: pip install -e '.[dev]')")
    return path


def run(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def initialised(tmp_path: Path, run_odw) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)
    proc = run_odw("init", "--path", str(tmp_path))
    assert proc.returncode == 0, proc.stderr
    return tmp_path


def test_action_yml_matches_githubs_action_schema() -> None:
    proc = run(
        tool("check-jsonschema"),
        "--builtin-schema",
        "vendor.github-actions",
        str(REPO_ROOT / "action.yml"),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_workflow_matches_githubs_workflow_schema(initialised: Path) -> None:
    wf = initialised / ".github" / "workflows" / "odw-stage.yml"
    proc = run(tool("check-jsonschema"), "--builtin-schema", "vendor.github-workflows", str(wf))
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_workflow_passes_actionlint(initialised: Path) -> None:
    proc = run(tool("actionlint"), "-no-color", cwd=initialised)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_workflow_uses_the_actions_real_inputs(tmp_path: Path, run_odw) -> None:
    """With the action checked in locally, actionlint checks every `with:` key."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)
    shutil.copy(REPO_ROOT / "action.yml", tmp_path / "action.yml")
    assert run_odw("init", "--path", str(tmp_path), "--action", "./").returncode == 0
    proc = run(tool("actionlint"), "-no-color", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # And actionlint would notice a wrong one.
    wf = tmp_path / ".github" / "workflows" / "odw-stage.yml"
    wf.write_text(wf.read_text().replace("token: ${{ inputs.token }}", "tokn: ${{ inputs.token }}"))
    assert run(tool("actionlint"), "-no-color", cwd=tmp_path).returncode != 0


def test_workflow_shape(initialised: Path) -> None:
    wf = yaml.safe_load((initialised / ".github/workflows/odw-stage.yml").read_text())
    on = wf[True]  # YAML 1.1 reads the key `on` as a boolean
    inputs = on["workflow_dispatch"]["inputs"]
    assert {"stage", "task", "token", "tag", "run-id"} <= set(inputs)
    # Run names are public to readers: they show the keyed tag, never the token.
    assert "${{ inputs.tag }}" in wf["run-name"]
    assert "inputs.token" not in wf["run-name"]
    assert wf["permissions"] == {}
    assert "inputs.task" in wf["concurrency"]["group"]
    jobs = wf["jobs"]
    assert jobs["write-stage"]["permissions"] == {"contents": "write"}
    assert jobs["read-stage"]["permissions"] == {"contents": "read"}
    for job in jobs.values():
        assert job["timeout-minutes"] == 120
        for step in job["steps"]:
            # Event data reaches scripts only through env:, never ${{ }} in run:.
            assert "${{" not in step.get("run", "")
    for stage in ("plan", "implement", "fix"):
        assert f"'{stage}'" in jobs["write-stage"]["if"]
        assert f"'{stage}'" not in jobs["read-stage"]["if"]


def test_no_checkout_leaves_a_token_in_the_agents_git_config(initialised: Path) -> None:
    """The agent runs in these checkouts: a persisted token there could push anything."""
    wf = yaml.safe_load((initialised / ".github/workflows/odw-stage.yml").read_text())
    checkouts = [
        step
        for job in wf["jobs"].values()
        for step in job["steps"]
        if str(step.get("uses", "")).startswith("actions/checkout@")
    ]
    assert len(checkouts) == 4
    for step in checkouts:
        assert step["with"]["persist-credentials"] is False, step["name"]


def test_action_hands_the_push_token_to_the_runner_through_a_file_only() -> None:
    """The push token is never in the environment of the step that runs the agent."""
    action = yaml.safe_load((REPO_ROOT / "action.yml").read_text())
    assert action["inputs"]["push-token"]["default"] == "${{ github.token }}"
    steps = {step.get("id"): step for step in action["runs"]["steps"]}
    assert "inputs.push-token" in steps["push-token"]["env"]["ODW_IN_PUSH_TOKEN"]
    stage = steps["stage"]
    assert not any("push-token" in value and "file" not in value for value in stage["env"].values())
    assert "--push-token-file" in stage["run"]


def test_action_scripts_take_event_data_only_through_env() -> None:
    action = yaml.safe_load((REPO_ROOT / "action.yml").read_text())
    for step in action["runs"]["steps"]:
        assert "${{" not in step.get("run", "")


def test_example_config_is_valid_and_complete(initialised: Path) -> None:
    data = yaml.safe_load((initialised / ".github/odw.yml").read_text())
    config = parse_repo_config(data)
    assert config.agent and config.gates and config.base == "main"
    assert config.identity is not None
    # The example names every run setting the core knows, so none is undocumented.
    assert set(data["config"]) == set(RunConfig().to_json())


def test_refuses_to_overwrite_without_force(initialised: Path, run_odw) -> None:
    config = initialised / ".github" / "odw.yml"
    config.write_text("agent: mine\n")
    proc = run_odw("init", "--path", str(initialised))
    assert proc.returncode == 1
    assert "already exist" in proc.stderr and "--force" in proc.stderr
    assert config.read_text() == "agent: mine\n"
    assert run_odw("init", "--path", str(initialised), "--force").returncode == 0
    assert config.read_text() != "agent: mine\n"


def test_one_existing_file_blocks_both(tmp_path: Path, run_odw) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "odw.yml").write_text("agent: mine\n")
    assert run_odw("init", "--path", str(tmp_path)).returncode == 1
    assert not (tmp_path / ".github" / "workflows").exists()


def test_bad_action_reference_is_a_usage_error(tmp_path: Path, run_odw) -> None:
    proc = run_odw("init", "--path", str(tmp_path), "--action", "evil\n  run: x")
    assert proc.returncode == 2
    assert not (tmp_path / ".github").exists()
