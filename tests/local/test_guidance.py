"""What `odw run --local` tells a maintainer: where a failure is, what to type next.

The text outputs are pinned by golden files (paths replaced by placeholders);
regenerate with `ODW_UPDATE_GOLDEN=1`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import signal
import subprocess
import time
from pathlib import Path

from app.store import Store
from app.store.store import sqlite_url
from tests.conftest import odw_executable
from tests.golden import assert_matches_golden
from tests.local.conftest import AGENT, FAST, Project, make_project
from tests.support import git

GOLDEN = Path(__file__).resolve().parents[1] / "cli" / "golden"
ROADMAP = """\
## 1. Work

- [ ] 1.1. First
- [ ] 1.2. Second
  - Requires 1.1.
- [ ] 1.3. Third
- [ ] 1.4. Fourth
"""


def _golden(name: str, text: str, p: Project) -> None:
    text = text.replace(AGENT, "{AGENT}").replace(shlex.quote(AGENT), "{AGENT}")
    text = text.replace(str(p.clone), "{CLONE}")
    path = GOLDEN / f"{name}.out"
    assert_matches_golden(path, text)


def _run_printed(p: Project, line: str) -> subprocess.CompletedProcess[str]:
    """Run a command exactly as printed, with `odw` being the installed script."""
    argv = shlex.split(line)
    assert argv[0] == "odw"
    return subprocess.run(
        [odw_executable(), *argv[1:]],
        capture_output=True,
        text=True,
        timeout=150,
        env={**os.environ, **p.env},
        check=False,
    )


def test_a_failure_says_where_and_what_to_type_and_the_printed_resume_lands_it(
    tmp_path: Path,
) -> None:
    p = make_project(tmp_path, ROADMAP, {"config": {**FAST, "maxParallel": 1}})
    p.set_script({"1.1": {"implement": ["no-marker"] * 4}})

    failed = p.run("--task", "1.1")
    assert failed.returncode == 1, failed.stderr
    _golden("run-failed", failed.stdout, p)
    # On stderr, the views the App would post: the task's when it failed, the run's at its end.
    why = "agent exited cleanly but did not emit the completion marker"
    assert f"task 1.1 First: failed at implement: {why}\n" in failed.stderr
    assert f"  Task 1.1 failed at implement: {why}. The branch roadmap-1-1 is kept.\n" in (
        failed.stderr
    )
    assert ": 0 of 4 landed · 1 failed (1.1) · halted\n" in failed.stderr
    assert "  needs remediation: 1.1 failed with no fault to explain it\n" in failed.stderr

    dry = p.run("--dry-run")
    assert dry.returncode == 1  # the real run would halt on the kept branch: so does this
    _golden("run-dry-survivor", dry.stdout, p)

    p.set_script({})
    resume = next(ln for ln in failed.stdout.splitlines() if "resume where it stopped" in ln)
    resumed = _run_printed(p, resume.split(":", 1)[1].strip())
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    _golden("run-resumed", resumed.stdout, p)
    assert p.landings() == ["1.1"]
    # The landed branch is gone from origin and from the clone.
    assert "roadmap-1-1" not in p.origin_branches()
    assert "roadmap-1-1" not in git(p.clone, "for-each-ref", "--format=%(refname)")


def test_task_that_is_not_open_reads_as_one_sentence(tmp_path: Path, run_odw) -> None:
    p = make_project(tmp_path, ROADMAP)
    r = run_odw("run", "--local", str(p.clone), "--agent", AGENT, "--task", "9.9")
    assert r.returncode == 2
    assert r.stderr == "odw run: --task 9.9 is not an open task in docs/roadmap.md\n"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_dry_run_sees_a_live_run_and_never_calls_its_branch_a_survivor(tmp_path: Path) -> None:
    p = make_project(tmp_path, ROADMAP, {"config": FAST})
    git(p.origin, "branch", "roadmap-1-1", "main")  # the live run's work in progress
    state = p.clone / ".git" / "odw"
    state.mkdir(parents=True)
    db = state / "local.sqlite3"
    store = Store.open(sqlite_url(db))
    try:
        # This test process plays the live owner: same host, a live pid.
        assert store.leases.acquire("local-base:main", "live-owner", 60)
        assert store.leases.acquire("run:local-live", "live-owner", 60)
    finally:
        store.close()  # the leases stay: their holder (this process) is alive
    attempts = state / "runs" / "local-live" / "attempts"
    attempts.mkdir(parents=True)
    record = {"key": "k", "task": "1.1", "stage": "plan", "token": "t"}
    (attempts / "x.json").write_text(json.dumps(record))
    before = {f.name: _digest(f) for f in state.iterdir() if f.is_file()}

    code, data, _ = p.run_json("--dry-run")
    text = p.run("--dry-run")
    assert code == 1 == text.returncode  # halted and the exit code agree
    assert data["halted"].startswith("refused: run local-live (pid ")
    assert data["live"]["tasks"] == ["1.1"]
    assert data["recovery"] is None  # no survivors: the branch is the live run's
    assert {
        "id": "1.1",
        "reason": "in progress in the live run (branch roadmap-1-1 on origin)",
    } in (data["held"])
    assert "push origin --delete" not in text.stdout
    assert "live: run local-live (pid" in text.stdout
    assert {f.name: _digest(f) for f in state.iterdir() if f.is_file()} == before
    assert p.origin_branches() == {"main", "roadmap-1-1"}


def test_ctrl_c_says_how_to_resume(tmp_path: Path) -> None:
    p = make_project(tmp_path, ROADMAP, {"config": {**FAST, "maxParallel": 1}})
    p.set_script({"1.1": {"plan": ["hang"]}})
    proc = subprocess.Popen(
        p.argv("--task", "1.1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **p.env},
        # As in a terminal: a suite started in the background (a job of a shell
        # without job control) ignores SIGINT, and its children would inherit that.
        preexec_fn=_default_sigint,
    )
    runs = p.clone / ".git" / "odw" / "runs"
    deadline = time.monotonic() + 60
    while not list(runs.glob("*/attempts/*.json")) and time.monotonic() < deadline:
        time.sleep(0.01)
    # At once: the attempt is recorded but its agent may not have started yet,
    # and an interrupt then must still end the run (it once hung on the agent).
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, out + err
    assert "interrupted; run the same command again to resume" in err
    assert "Traceback" not in err


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)
