"""`odw integrate` as users and the orchestrator run it: real processes, real origins."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

from app.core.roadmap_edit import is_ticked
from tests.conftest import RunOdw, odw_executable
from tests.gitops.conftest import GitSpy
from tests.gitops.origins import Origin
from tests.support import git


def cli_args(origin: Origin, task_id: str, data_dir: Path, *extra: str) -> list[str]:
    branch = "roadmap-" + task_id.replace(".", "-")
    return [
        "integrate", "--repo", str(origin.path), "--base", origin.base, "--branch", branch,
        "--task", task_id, "--data-dir", str(data_dir), "--run-id", "run-42", *extra,
    ]  # fmt: skip


def test_json_report_and_exit_zero(origin: Origin, data_dir: Path, run_odw: RunOdw):
    origin.task_branch("1.1.1")
    done = run_odw(*cli_args(origin, "1.1.1", data_dir, "--json"))
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert set(report) == {
        "ok", "rebased", "squashMerged", "pushed", "roadmapMarkedDone", "attempts", "sha",
        "conflicts", "summary",
    }  # fmt: skip
    assert all(report[k] for k in ("ok", "rebased", "squashMerged", "pushed", "roadmapMarkedDone"))
    assert report["sha"] == origin.head()
    assert "ODW-Run: run-42" in origin.log()[0][1]

    again = run_odw(*cli_args(origin, "1.1.1", data_dir))
    assert again.returncode == 0
    assert "1.1.1 landed on main" in again.stdout
    assert "push attempts        0" in again.stdout
    assert "already landed" in again.stdout


def test_conflict_exits_nonzero_naming_the_paths(origin: Origin, data_dir: Path, run_odw: RunOdw):
    origin.task_branch("1.1.2", {"shared.txt": "one\nmine\n"})
    assert origin.external_commit(origin.clone(), "shared.txt", "one\ntheirs\n")
    refs = origin.refs()
    done = run_odw(*cli_args(origin, "1.1.2", data_dir))
    assert done.returncode == 1
    assert "NOT landed" in done.stdout
    assert "conflicting paths: shared.txt" in done.stdout
    assert origin.refs() == refs


def test_bad_arguments_exit_two_with_one_line(tmp_path: Path, run_odw: RunOdw):
    done = run_odw(
        "integrate", "--repo", "https://x:tok@example.com/r.git", "--base", "main",
        "--branch", "roadmap-1-1-1", "--task", "1.1.1", "--data-dir", str(tmp_path / "d"),
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("odw integrate: ") and len(done.stderr.splitlines()) == 1
    assert "tok" not in done.stderr.replace("ODW_GIT_TOKEN", "")
    assert not (tmp_path / "d").exists()


def test_concurrent_processes_and_an_external_pusher(origin: Origin, data_dir: Path):
    """Every task lands exactly once, history stays linear, no external commit is lost.

    The landings start once the pusher has landed a commit, and it keeps pushing
    while they run: five landings can take less time than a few pushes, and
    the test must not depend on the pusher winning a race against them.
    """
    tasks = ["1.1.1", "1.1.2", "1.1.3", "1.1.4", "1.1.5"]
    for tid in tasks:
        origin.task_branch(tid)
    external: list[str] = []
    stop = threading.Event()
    pushed_one = threading.Event()

    def pusher() -> None:
        work = origin.clone()
        n = 0
        while not stop.is_set() and n < 200:
            n += 1
            sha = origin.external_commit(work, f"external/{n}.txt", f"{n}\n")
            if sha:
                external.append(sha)
                pushed_one.set()
            stop.wait(0.1)

    thread = threading.Thread(target=pusher)
    thread.start()
    assert pushed_one.wait(60), "the external pusher never landed a commit"
    procs = [
        subprocess.Popen(
            [odw_executable(), *cli_args(origin, tid, data_dir, "--json", "--max-attempts", "25")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tid in tasks
    ]
    try:
        outs = [p.communicate(timeout=180) for p in procs]
    finally:
        stop.set()
        thread.join(60)
        for p in procs:
            p.kill()
    reports = [json.loads(out) for out, _ in outs]
    assert [p.returncode for p in procs] == [0] * len(tasks), [r["summary"] for r in reports]
    assert all(r["ok"] and r["pushed"] and r["roadmapMarkedDone"] for r in reports)

    log = origin.log()
    assert all(len(parents) <= 1 for _, _, parents in log), "history is not linear"
    for tid, report in zip(tasks, reports, strict=True):
        assert origin.task_commits(tid) == [report["sha"]]
        assert is_ticked(origin.roadmap(), tid)
        assert f"parts/{tid}.txt" in origin.files()
    on_base = {sha for sha, _, _ in log}
    assert set(external) <= on_base, "an external commit was lost"
    assert len(origin.files()) == 3 + len(tasks) + len(external)  # seed files + parts + external


def test_crash_before_push_then_rerun_lands_once(
    origin: Origin, data_dir: Path, spy: GitSpy, run_odw: RunOdw
):
    origin.task_branch("1.1.3")
    refs = origin.refs()
    crashed = run_odw(
        *cli_args(origin, "1.1.3", data_dir), env={**os.environ, **spy.env("crash-before")}
    )
    assert crashed.returncode == -9
    assert origin.refs() == refs  # killed between squash and push: nothing landed
    leftovers = list((data_dir / "worktrees").glob("*/*"))
    assert leftovers, "expected the killed process to leave its worktree behind"

    done = run_odw(*cli_args(origin, "1.1.3", data_dir, "--json"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["attempts"] == 1
    assert len(origin.task_commits("1.1.3")) == 1
    # Only the worktree kept for the base remains, reset and reused by the rerun.
    assert [p.name[:10] for p in (data_dir / "worktrees").glob("*/*")] == ["kept-main-"]


def test_crash_after_push_then_rerun_pushes_nothing(
    origin: Origin, data_dir: Path, spy: GitSpy, run_odw: RunOdw
):
    origin.task_branch("1.1.4")
    crashed = run_odw(
        *cli_args(origin, "1.1.4", data_dir), env={**os.environ, **spy.env("crash-after")}
    )
    assert crashed.returncode == -9
    landed = origin.task_commits("1.1.4")
    assert len(landed) == 1  # a hidden success: pushed, but no report was printed
    spy.reset()
    done = run_odw(*cli_args(origin, "1.1.4", data_dir, "--json"), env={**os.environ, **spy.env()})
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["attempts"] == 0 and report["sha"] == landed[0]
    assert "push" not in spy.subcommands()
    assert origin.task_commits("1.1.4") == landed
    git(origin.path, "fsck", "--no-progress")


def test_an_unusable_data_dir_is_one_clear_line(origin: Origin, tmp_path: Path, run_odw: RunOdw):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("x")
    origin.task_branch("1.1.1")
    refs = origin.refs()
    done = run_odw(*cli_args(origin, "1.1.1", blocker))
    assert done.returncode == 1
    assert done.stderr.startswith("odw integrate: cannot use data directory")
    assert "Traceback" not in done.stderr
    assert origin.refs() == refs
