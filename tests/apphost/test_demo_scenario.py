"""`make demo ARGS=...` rehearses a maintainer's own scenario: each option does what
its name says, seen in what the demo prints and leaves behind, and bad input
gets one line and exit status 2 before anything starts."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import browser
from tests.apphost import demo
from tests.apphost.demo_scenario import target_task
from tests.conftest import REPO_ROOT
from tests.fakegithub.oracles import REST_OPENAPI, require_oracle
from tests.needs import CHROMIUM, unavailable
from tests.service.live import kill_group

ROADMAP = """\
# Roadmap

- [ ] 1.1. Teach the widget to greet
"""
# One attempt per stage and one gate retry: the failure comes as soon as it can.
CONFIG = """\
gates: ["make test"]
identity: {name: odw-runner, email: odw-runner@example.com}
config:
  maxParallel: 1
  gateRetryBudget: {build: 1}
"""
MAKEFILE = 'test:\n\t@echo "widget_test.py::test_greet FAILED"\n\t@exit 1\n'


@dataclass
class Rehearsal:
    code: int
    out: str
    err: str
    keep: Path
    log: Path


def _demo(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`python -m tests.apphost.demo ARGS`, as `make demo ARGS=...` runs it."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.apphost.demo", *args],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        kill_group(proc)  # the service it started, should it outlive a timeout
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.slow
def test_a_failing_gate_rehearsed_with_every_option(tmp_path: Path) -> None:
    """A one-task roadmap whose `make test` gate (a Makefile from --files) always
    fails; a reader and then a maintainer ask to retry it on its pull request.
    One rehearsal (they cost seconds each), checked option by option."""
    require_oracle(REST_OPENAPI)
    (tmp_path / "roadmap.md").write_text(ROADMAP)
    (tmp_path / "odw.yml").write_text(CONFIG)
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "Makefile").write_text(MAKEFILE)
    keep, log = tmp_path / "kept", tmp_path / "requests.jsonl"
    # The dashboard's screenshot rides along where a browser is (always in CI).
    shot = tmp_path / "dashboard.png" if browser.available() else None
    proc = _demo(
        "--roadmap", str(tmp_path / "roadmap.md"),
        "--config", str(tmp_path / "odw.yml"),
        "--files", str(tmp_path / "files"),
        "--comment", "reader:read:/odw retry 1.1",
        "--comment", "maintainer:write:/odw retry 1.1",
        "--request-log", str(log),
        "--keep", str(keep),
        *(["--dashboard-shot", str(shot)] if shot is not None else []),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    rehearsal = Rehearsal(proc.returncode, proc.stdout, proc.stderr, keep, log)
    _roadmap_is_the_repositorys(rehearsal)
    _config_gate_runs_the_makefile_from_files(rehearsal)
    _comments_are_posted_in_order_by_collaborators_and_answered(rehearsal)
    _request_log_has_a_json_line_per_request_with_the_dispatches(rehearsal)
    _keep_leaves_the_repository_and_the_service_data(rehearsal)
    if shot is None:
        unavailable(CHROMIUM)  # after the rest: a skip here (a failure in CI) loses nothing
    _dashboard_shot_is_a_png_of_the_run(rehearsal, shot)


def _git(bare: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(bare), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _roadmap_is_the_repositorys(r: Rehearsal) -> None:
    """--roadmap: printed, committed as docs/roadmap.md, its task gets a pull request."""
    assert "- [ ] 1.1. Teach the widget to greet" in r.out
    assert "PR #1 ODW 1.1: Teach the widget to greet [open" in r.out
    assert "Add a greeting" not in r.out  # not the built-in roadmap
    assert _git(r.keep / "github" / "octo" / "demo.git", "show", "main:docs/roadmap.md") == ROADMAP


def _config_gate_runs_the_makefile_from_files(r: Rehearsal) -> None:
    """--config and --files: the repository holds them as given, and the gate the
    config names runs the Makefile and fails the task."""
    assert "gates `make test`" in r.out
    assert "task 1.1   failed" in r.out
    check = r.out.split("--- check run `ODW · 1.1`: failure", 1)[1]
    assert "make test" in check.split("\n---", 1)[0]
    bare = r.keep / "github" / "octo" / "demo.git"
    assert _git(bare, "show", "main:Makefile") == MAKEFILE
    assert _git(bare, "show", "main:.github/odw.yml") == CONFIG


def _comments_are_posted_in_order_by_collaborators_and_answered(r: Rehearsal) -> None:
    """--comment: on the failed task's pull request, in order, each author a
    collaborator with the permission given, and what followed is printed."""
    reader = r.out.index("$ reader (read) comments on PR #1 (1.1):")
    maintainer = r.out.index("$ maintainer (write) comments on PR #1 (1.1):")
    assert reader < maintainer
    # The reader is refused, naming the permission they have and the one needed.
    after_reader = r.out[reader:maintainer]
    assert "@reader:\n    reactions: eyes, confused\n  /odw retry 1.1" in after_reader
    assert "`read`" in after_reader and "`write`" in after_reader
    # The maintainer's retry is seen and answered on the pull request.
    after = r.out[maintainer:]
    assert "@maintainer:\n    reactions: eyes" in after
    replies = after.split("@maintainer:", 1)[1]
    assert "@odw[bot]:" in replies and "> `/odw retry 1.1`" in replies
    assert "@maintainer" in replies


def _request_log_has_a_json_line_per_request_with_the_dispatches(r: Rehearsal) -> None:
    """--request-log: every request the fake answered, one JSON object a line."""
    entries = [json.loads(line) for line in r.log.read_text().splitlines()]
    assert f"\n{len(entries)} REST requests to the fake" in r.out
    dispatches = [
        e
        for e in entries
        if e["method"] == "POST"
        and e["path"] == "/repos/octo/demo/actions/workflows/odw-stage.yml/dispatches"
    ]
    assert {d["body"]["inputs"]["task"] for d in dispatches} == {"1.1"}
    assert {d["body"]["inputs"]["stage"] for d in dispatches} >= {"plan", "implement"}
    assert all(d["status"] in (200, 204) for d in dispatches)


def _keep_leaves_the_repository_and_the_service_data(r: Rehearsal) -> None:
    """--keep: the fake's repositories and the service's database stay."""
    assert f"kept: {r.keep}" in r.out
    assert (r.keep / "service" / "odw.sqlite3").is_file()
    assert "roadmap-1-1" in _git(r.keep / "github" / "octo" / "demo.git", "branch")


def _dashboard_shot_is_a_png_of_the_run(r: Rehearsal, shot: Path) -> None:
    """--dashboard-shot FILE: a PNG of the run's dashboard page, saved at the end."""
    assert "dashboard of run gh-octo-demo-main-" in r.out and str(shot) in r.out
    png = shot.read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    width, height = struct.unpack(">II", png[16:24])  # the IHDR chunk
    assert width >= 1000 and height >= 600


@pytest.mark.slow
def test_agent_script_makes_the_chosen_stage_fail(tmp_path: Path) -> None:
    require_oracle(REST_OPENAPI)
    roadmap, script = tmp_path / "roadmap.md", tmp_path / "script.json"
    roadmap.write_text("# Roadmap\n\n- [ ] 1.1. Plan something\n")
    script.write_text(json.dumps({"1.1": {"plan": ["exit:7"] * 10}}))
    proc = _demo("--roadmap", str(roadmap), "--agent-script", str(script))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"script {script}" in proc.stdout
    assert "task 1.1   failed" in proc.stdout
    # A task with no commit of its own has no task check: the run check says it.
    check = proc.stdout.split("--- check run `ODW · run`:")[-1]
    assert "failed at plan" in check  # the row names the stage that failed
    assert not (tmp_path / ".state").exists()  # counters live in the demo's directory


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--roadmap", "{tmp}/nope.md"], "--roadmap {tmp}/nope.md: no such file"),
        (["--config", "{tmp}/nope.yml"], "--config {tmp}/nope.yml: no such file"),
        (["--files", "{tmp}/nope"], "--files {tmp}/nope: no such directory"),
        (["--agent-script", "{tmp}/nope.json"], "--agent-script {tmp}/nope.json: no such file"),
        (["--agent-script", "{tmp}/bad.json"], "--agent-script {tmp}/bad.json: not JSON"),
        (["--agent-script", "{tmp}/list.json"], "expected an object such as"),
        (["--comment", "maintainer:/odw retry"], "expected LOGIN:PERMISSION:TEXT"),
        (["--comment", "maintainer:push:/odw retry"], "unknown permission 'push'"),
        (["--comment", "-bad-:write:/odw retry"], "'-bad-' is not a GitHub login"),
        (["--comment", "maintainer:write:  "], "the comment's text is empty"),
        (["--request-log", "{tmp}/no/dir/log.jsonl"], "its directory does not exist"),
        (["--keep", "{tmp}/bad.json"], "exists and is not a directory"),
        (["--keep", "{tmp}"], "not empty (an earlier rehearsal?)"),
        (["--dashboard-shot", "{tmp}/shot.jpg"], "a screenshot is a .png file"),
        (["--dashboard-shot", "{tmp}/no/dir/shot.png"], "its directory does not exist"),
        (["--frobnicate"], "unrecognized arguments: --frobnicate"),
    ],
    ids=[
        "missing-roadmap",
        "missing-config",
        "missing-files-dir",
        "missing-agent-script",
        "agent-script-not-json",
        "agent-script-wrong-shape",
        "comment-malformed",
        "comment-unknown-permission",
        "comment-bad-login",
        "comment-empty",
        "request-log-no-dir",
        "keep-is-a-file",
        "keep-not-empty",
        "dashboard-shot-not-png",
        "dashboard-shot-no-dir",
        "unknown-option",
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "list.json").write_text('["exit:3"]')
    code = demo.main([a.format(tmp=tmp_path) for a in argv])
    out, err = capsys.readouterr()
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("make demo: ")
    assert message.format(tmp=tmp_path) in err


def test_bad_input_from_the_command_line_has_no_traceback() -> None:
    proc = _demo("--comment", "maintainer:owner:/odw retry 1.1", timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == (
        "make demo: --comment 'maintainer:owner:/odw retry 1.1': unknown permission 'owner' "
        "(one of read, triage, write, maintain, admin)\n"
    )
    assert proc.stdout == ""


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        (["landed", "failed", "failed"], "1.2"),
        (["landed", "parked", "landed"], "1.1"),
        ([], None),
    ],
    ids=["first-failed", "none-failed-first-task", "no-tasks"],
)
def test_comments_go_to_the_first_failed_task_else_the_first(
    statuses: list[str], expected: str | None
) -> None:
    results = [{"id": f"1.{i + 1}", "status": st} for i, st in enumerate(statuses)]
    assert target_task(results) == expected
