"""Kill -9 of `odw run --local` mid-run, then the same command again."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from app.store import Store
from app.store.store import sqlite_url
from tests.local.conftest import FAST, result_of

pytestmark = pytest.mark.slow

ROADMAP = """\
## 1. Work

- [ ] 1.1. Lands before the crash
- [ ] 1.2. Is mid-implement when the run is killed
- [ ] 1.3. Waits for 1.2
  - Requires 1.2.
"""


def _wait_for(what: str, check, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _logged_landings(clone: Path) -> set[str]:
    """Tasks the run's event log records as landed (read-only, beside the live writer)."""
    db = clone / ".git" / "odw" / "local.sqlite3"
    if not db.exists():
        return set()
    try:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
            rows = conn.execute("SELECT data FROM run_events WHERE type = 'task-landed'")
            return {json.loads(data)["task"] for (data,) in rows}
    except sqlite3.Error:
        return set()


def _recorded_runner(clone: Path, task: str, stage: str) -> bool:
    """The attempt record of `task`'s `stage` names its runner process and worktree."""
    for path in (clone / ".git" / "odw" / "runs").glob("*/attempts/*.json"):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if record["task"] == task and record["stage"] == stage:
            return record.get("pid") is not None and record.get("worktree") is not None
    return False


def _processes_with(needle: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_kill_9_mid_run_then_rerun_completes_and_lands_nothing_twice(project_factory) -> None:
    config = {"maxParallel": 2, **FAST}
    config["stageDeadlines"] = {**FAST["stageDeadlines"], "implement": 90}
    p = project_factory(ROADMAP, {"config": config})
    p.set_script({"1.2": {"implement": ["hang"]}})
    hang_started = p.state / "1-2.implement.count"

    first = subprocess.Popen(
        p.argv("--json"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **p.env},
    )
    try:
        # Kill only once the run's own state says so: 1.1's landing is in the event
        # log and 1.2's attempt record names the runner the rerun must clean up.
        _wait_for("1.1 to land and 1.2's agent to hang", lambda: (
            p.landings() == ["1.1"] and hang_started.exists()
            and _logged_landings(p.clone) == {"1.1"}
            and _recorded_runner(p.clone, "1.2", "implement")
        ))  # fmt: skip
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode == -signal.SIGKILL
    # The dead run's stage runner and hung agent outlive it until the rerun.
    needle = f"SCRIPTED_AGENT_STATE={p.state}"
    assert _processes_with(needle), "the hung agent should still be running"

    code, data, stderr = p.run_json()

    assert code == 0, stderr
    assert sorted(data["processed"]) == ["1.1", "1.2", "1.3"]
    assert p.landing_counts() == {"1.1": 1, "1.2": 1, "1.3": 1}
    resumed = result_of(data, "1.2")
    assert resumed["status"] == "landed" and resumed["attempts"]["implement"] == 2
    assert data["faultMetrics"]["infraRetries"] >= 1
    assert _processes_with(needle) == []
    store = Store.open(sqlite_url(p.clone / ".git" / "odw" / "local.sqlite3"))
    try:
        assert [v.run_id for v in store.projections.runs()] == [data["runId"]]
        assert store.projections.run(data["runId"]).status == "finished"  # type: ignore[union-attr]
    finally:
        store.close()
    # No task branch is left checked out in a stale worktree of PATH.
    worktrees = subprocess.run(
        ["git", "worktree", "list", "--porcelain"], cwd=p.clone, capture_output=True, text=True
    ).stdout
    assert worktrees.count("worktree ") == 1

    # Running it once more starts a new run with nothing left to do.
    code, again, _ = p.run_json()
    assert code == 0 and again["processed"] == [] and again["runId"] != data["runId"]


_KILL_ON_BASE_PUSH = """#!/bin/sh
# A `git` that kills the process running it (odw run) just before the first push
# to the base (whatever it pushes there), so the run dies in the middle of an integration.
for a in "$@"; do
  case "$a" in
    *:main|*:refs/heads/main)
      if [ ! -e "{marker}" ]; then : > "{marker}"; kill -9 "$PPID"; exit 137; fi ;;
  esac
done
exec "{git}" "$@"
"""


def test_kill_9_during_an_integration_then_rerun_lands_it_once(project_factory, tmp_path) -> None:
    p = project_factory("- [ ] 1.1. Only task\n", {"config": {"maxParallel": 1, **FAST}})
    bin_dir = tmp_path / "crash-bin"
    bin_dir.mkdir()
    marker = tmp_path / "killed-once"
    wrapper = bin_dir / "git"
    real_git = shutil.which("git") or "/usr/bin/git"
    wrapper.write_text(_KILL_ON_BASE_PUSH.format(marker=marker, git=real_git))
    wrapper.chmod(0o755)
    env = {**os.environ, **p.env, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    first = subprocess.run(p.argv("--json"), env=env, capture_output=True, timeout=150)
    assert marker.exists(), first.stderr
    assert first.returncode == -signal.SIGKILL
    assert p.landings() == []

    code, data, stderr = p.run_json()
    assert code == 0, stderr
    assert data["processed"] == ["1.1"]
    assert p.landing_counts() == {"1.1": 1}
    assert "- [x] 1.1. Only task" in p.roadmap_on_origin()
