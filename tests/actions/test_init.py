"""`odw init` output, checked by GitHub's published schemas, actionlint, the
roadmap parser and the code's own defaults."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from app.core.config import DISPATCHED_STAGES, RunConfig
from app.core.identity import RUNNER_IDENTITY
from app.core.repo_config import RepoConfig, parse_repo_config, read_repo_config
from tests.conftest import REPO_ROOT

ACTION = "octo-org/odw@v0.1.0"
README = REPO_ROOT / "README.md"

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
    proc = run_odw("init", "--path", str(tmp_path), "--action", ACTION)
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


def actionlint(cwd: Path) -> subprocess.CompletedProcess[str]:
    """actionlint with shellcheck, so every `run:` script is checked too."""
    return run(tool("actionlint"), "-no-color", "-shellcheck", tool("shellcheck"), cwd=cwd)


def test_workflow_passes_actionlint(initialised: Path) -> None:
    proc = actionlint(initialised)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_actionlint_checks_the_workflows_scripts(initialised: Path) -> None:
    wf = initialised / ".github" / "workflows" / "odw-stage.yml"
    wf.write_text(wf.read_text().replace('name="$ODW_BRANCH"', "name=$ODW_BRANCH; cd $name", 1))
    proc = actionlint(initialised)
    assert proc.returncode != 0 and "shellcheck" in proc.stdout, proc.stdout


def test_workflow_uses_the_actions_real_inputs(tmp_path: Path, run_odw) -> None:
    """With the action checked in locally, actionlint checks every `with:` key."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True, timeout=30)
    shutil.copy(REPO_ROOT / "action.yml", tmp_path / "action.yml")
    assert run_odw("init", "--path", str(tmp_path), "--action", "./").returncode == 0
    proc = actionlint(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # And actionlint would notice a wrong one.
    wf = tmp_path / ".github" / "workflows" / "odw-stage.yml"
    wf.write_text(wf.read_text().replace("token: ${{ inputs.token }}", "tokn: ${{ inputs.token }}"))
    assert actionlint(tmp_path).returncode != 0


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
    # The example names every setting the code knows, so none is undocumented.
    assert set(data) == {field.alias or name for name, field in RepoConfig.model_fields.items()}
    assert set(data["config"]) == set(RunConfig().to_json())


def test_written_config_holds_the_codes_defaults(initialised: Path) -> None:
    """What `odw init` writes behaves as no file at all, but for what the user
    must choose (the agent, the gates) and the identity spelled out."""
    written = read_repo_config((initialised / ".github/odw.yml").read_text())
    default = RepoConfig()
    chosen = {"agent", "gates", "identity", "config"}
    assert written.model_dump(exclude=chosen) == default.model_dump(exclude=chosen)
    assert written.identity == RUNNER_IDENTITY
    assert written.config.model_dump(exclude={"stage_deadlines"}) == (
        default.config.model_dump(exclude={"stage_deadlines"})
    )
    for stage in DISPATCHED_STAGES:
        assert written.config.deadline(stage) == default.config.deadline(stage), stage


def test_readme_shows_exactly_the_config_odw_init_writes(initialised: Path) -> None:
    block = re.search(
        r"<!-- odw-yml:start -->\n```yaml\n(.*?)```\n<!-- odw-yml:end -->",
        README.read_text(),
        flags=re.DOTALL,
    )
    assert block, "README.md lost its odw-yml markers"
    assert block.group(1) == (initialised / ".github/odw.yml").read_text(), (
        "README.md's .github/odw.yml differs from what odw init writes; paste it"
    )


def test_readmes_run_configuration_defaults_are_the_codes() -> None:
    """Each run setting is listed as `name` (default...) in the first paragraph
    under "Run configuration"."""
    text = README.read_text()
    section = text[text.index("### Run configuration\n\n") + len("### Run configuration\n\n") :]
    section = section[: section.index("\n\n")]
    documented = {
        name: yaml.safe_load(value)
        for name, value in re.findall(r"`(\w+)`\s+\(([^;:)]*)", section.replace("\n", " "))
    }
    defaults = RunConfig().to_json()
    assert {name: documented.get(name) for name in defaults} == defaults


def test_starter_roadmap_parses_clean(initialised: Path, run_odw) -> None:
    proc = run_odw("roadmap", str(initialised / "docs" / "roadmap.md"), "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["errors"] == [] and report["warnings"] == []
    open_tasks = [task for task in report["tasks"] if not task["done"]]
    assert open_tasks and all(task["success"] for task in open_tasks)
    # Something for `odw next` to offer at once.
    ready = json.loads(run_odw("next", str(initialised / "docs/roadmap.md"), "--json").stdout)
    assert ready["ready"]


def test_an_existing_roadmap_is_never_touched(tmp_path: Path, run_odw) -> None:
    roadmap = tmp_path / "docs" / "roadmap.md"
    roadmap.parent.mkdir()
    roadmap.write_text("- [ ] 1.1. Mine\n")
    assert run_odw("init", "--path", str(tmp_path), "--action", ACTION).returncode == 0
    assert run_odw("init", "--path", str(tmp_path), "--action", ACTION, "--force").returncode == 0
    assert roadmap.read_text() == "- [ ] 1.1. Mine\n"


def test_the_action_reference_is_required(tmp_path: Path, run_odw) -> None:
    proc = run_odw("init", "--path", str(tmp_path))
    assert proc.returncode == 2
    assert "--action" in proc.stderr and "OWNER/odw@v" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / ".github").exists() and not (tmp_path / "docs").exists()


def test_the_workflow_runs_the_published_action(initialised: Path) -> None:
    wf = yaml.safe_load((initialised / ".github/workflows/odw-stage.yml").read_text())
    for job in wf["jobs"].values():
        (stage,) = [step for step in job["steps"] if step["name"] == "Run the stage"]
        assert stage["uses"] == ACTION


def test_toolchain_and_agent_are_installed_before_the_stage_runs(initialised: Path) -> None:
    wf = yaml.safe_load((initialised / ".github/workflows/odw-stage.yml").read_text())
    config = read_repo_config((initialised / ".github/odw.yml").read_text())
    assert config.agent is not None
    for job in wf["jobs"].values():
        names = [step["name"] for step in job["steps"]]
        toolchain = names.index("Install the project's toolchain")
        agent = names.index("Install the agent")
        stage = names.index("Run the stage")
        assert toolchain < stage and agent < stage
        install = job["steps"][agent]["run"]
        active = [
            line for line in install.splitlines() if line and not line.lstrip().startswith("#")
        ]
        # The agent the config names is the one the step installs.
        assert active == ["npm install -g @anthropic-ai/claude-code"]
        assert config.agent.split()[0] == "claude"
        for agent_name in ("@anthropic-ai/claude-code", "@openai/codex", "aider-chat"):
            assert agent_name in install
        # Its key reaches the stage from a repository secret, never written out.
        env = job["steps"][stage]["env"]
        assert env == {"ANTHROPIC_API_KEY": "${{ secrets.ANTHROPIC_API_KEY }}"}
        others = [step for index, step in enumerate(job["steps"]) if index != stage]
        assert not any("secrets." in json.dumps(step) for step in others)
        for language in ("Python", "Node", "Rust"):
            assert f"# {language}:" in job["steps"][toolchain]["run"]


def test_refuses_to_overwrite_without_force(initialised: Path, run_odw) -> None:
    config = initialised / ".github" / "odw.yml"
    config.write_text("agent: mine\n")
    proc = run_odw("init", "--path", str(initialised), "--action", ACTION)
    assert proc.returncode == 1
    assert "already exist" in proc.stderr and "--force" in proc.stderr
    assert config.read_text() == "agent: mine\n"
    assert (
        run_odw("init", "--path", str(initialised), "--action", ACTION, "--force").returncode == 0
    )
    assert config.read_text() != "agent: mine\n"


def test_one_existing_file_blocks_both(tmp_path: Path, run_odw) -> None:
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "odw.yml").write_text("agent: mine\n")
    assert run_odw("init", "--path", str(tmp_path), "--action", ACTION).returncode == 1
    assert not (tmp_path / ".github" / "workflows").exists()


def test_bad_action_reference_is_a_usage_error(tmp_path: Path, run_odw) -> None:
    proc = run_odw("init", "--path", str(tmp_path), "--action", "evil\n  run: x")
    assert proc.returncode == 2
    assert not (tmp_path / ".github").exists()
