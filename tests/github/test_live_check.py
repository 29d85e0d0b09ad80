"""`make live-check` (app/cli/live_check.py): one clear line and success when
the live settings are unset; against the fake GitHub served over HTTP (the
client pointed at it by `ODW_GITHUB_API_URL`), every step it would take on
github.com, proven by what the fake holds afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import live_check
from app.cli.init_cmd import render_workflow
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.oracles import REPO_ROOT
from tests.github.conftest import REPO

FILES = {
    "README.md": "# demo\n",
    ".github/workflows/odw-stage.yml": render_workflow("octo/odw@v1", 30),
}


def test_without_the_live_settings_it_skips_in_one_clear_line() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ODW_LIVE_")}
    env["ODW_LIVE_REPO"] = "octo/demo"  # one of three is not enough
    done = subprocess.run(
        [sys.executable, "-m", "app.cli.live_check"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, live_check.SKIPPED + "\n", "")
    assert "ODW_LIVE_APP_ID, ODW_LIVE_PRIVATE_KEY_PATH and ODW_LIVE_REPO" in done.stdout


def _settings(fake: FakeGitHub, tmp_path: Path) -> dict[str, str]:
    return {
        "ODW_LIVE_APP_ID": str(fake.app_id),
        "ODW_LIVE_PRIVATE_KEY_PATH": str(fake.write_private_key(tmp_path)),
        "ODW_LIVE_REPO": REPO,
        "ODW_GITHUB_API_URL": fake.api_url,
        "ODW_LIVE_TIMEOUT": "60",
    }


def _stage_run(fake: FakeGitHub, upload: bool) -> None:
    """What the stage workflow does on Actions: run, upload its verdict, complete."""

    def run(dispatched: s.WorkflowRun) -> None:
        fake.start_run(dispatched.id)
        if upload:
            fake.upload_artifact(dispatched.id, "odw-verdict", {"verdict.json": "{}"})
        fake.complete_run(dispatched.id, "success")

    fake.on_dispatch.append(run)


def test_every_step_runs_against_a_github_over_http_and_leaves_nothing_behind(
    fake: FakeGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = fake.create_repository(REPO, FILES)
    fake.install("octo", [REPO])
    _stage_run(fake, upload=True)
    assert live_check.main(_settings(fake, tmp_path)) == 0
    lines = capsys.readouterr().out.splitlines()
    steps = [line.split(":")[0] for line in lines]
    assert steps == [
        "ok   installation",
        "ok   default branch",
        "ok   base head",
        "ok   create branch",
        "ok   push a commit (git)",
        "ok   check run",
        "ok   pull request",
        "ok   comment",
        "ok   dispatch",
        "ok   run completes",
        "ok   read artifact",
        "ok   close pull request",
        "ok   delete branch",
        "live-check",
    ], lines
    assert lines[-1] == "live-check: every step passed"
    (check,) = [c for c in fake.check_runs.values() if c.name == live_check.CHECK_NAME]
    assert len(check.output["summary"].encode()) == 65_535
    (pull,) = fake.pulls.values()
    assert pull.state == "closed" and pull.head.startswith("roadmap-odw-live-check-")
    assert [c.body for c in fake.comments.values()] == ["ODW live check: a comment."]
    (run,) = fake.runs.values()
    assert (run.workflow, run.inputs["stage"], run.ref) == ("odw-stage.yml", "gates", pull.head)
    assert not [ref for ref in repo.git.refs() if "live-check" in ref]


def test_a_failed_step_says_which_and_still_deletes_the_branch(
    fake: FakeGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = fake.create_repository(REPO, FILES)
    fake.install("octo", [REPO])
    _stage_run(fake, upload=False)
    assert live_check.main(_settings(fake, tmp_path)) == 1
    out = capsys.readouterr().out
    assert "FAIL read artifact: run " in out and "uploaded no odw-verdict artifact" in out
    assert "ok   delete branch" in out and out.endswith("live-check: FAILED\n")
    assert not [ref for ref in repo.git.refs() if "live-check" in ref]


def test_an_app_not_installed_on_the_repository_fails_at_the_first_step(
    fake: FakeGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.create_repository(REPO, FILES)
    assert live_check.main(_settings(fake, tmp_path)) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("FAIL installation: GitHub apps.installation: 404"), out
    assert out[-1] == "live-check: FAILED"
