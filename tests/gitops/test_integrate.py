"""Squash integration against real bare origins, called in-process."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from app.core.integration import IntegrationReport, halt_detail
from app.core.roadmap_edit import tick
from app.gitops.integrate import integrate
from app.gitops.landing_job import (
    Again,
    IntegrationInputError,
    Landing,
    LandingJob,
    Steps,
    TaskAttempt,
)
from app.gitops.lock import InProcessMergeLock, MergeLock
from app.gitops.mirror import Mirror, normalise_remote
from app.gitops.runner import GitRunner
from tests.gitops.conftest import GitSpy
from tests.gitops.origins import Origin, roadmap_text
from tests.support import git

ALL_TASKS = ["1.1.1", "1.1.2", "1.1.3", "1.1.4", "1.1.5"]


def land(origin: Origin, task_id: str, data_dir: Path, lock: MergeLock | None = None, **kw):
    branch = "roadmap-" + task_id.replace(".", "-")
    return integrate(
        str(origin.path), origin.base, branch, task_id, run_id=kw.pop("run_id", "run-7"),
        lock=lock or InProcessMergeLock(), data_dir=data_dir, **kw,
    )  # fmt: skip


def test_lands_one_squash_commit_with_trailers_and_the_box_ticked(origin: Origin, data_dir: Path):
    before = origin.head()
    branch = origin.task_branch("1.1.2")
    branch_tip = origin.head(branch)
    report = land(origin, "1.1.2", data_dir)

    assert report.complete and halt_detail(report) is None
    assert report.attempts == 1
    assert report.sha == origin.head()
    _sha, body, parents = origin.log()[0]
    assert parents == [before]  # one commit on top of the old base: linear, squashed
    assert body.splitlines()[0] == "Build part 1.1.2 (1.1.2)"
    assert body.rstrip().splitlines()[-2:] == ["ODW-Task: 1.1.2", "ODW-Run: run-7"]
    assert origin.roadmap() == tick(roadmap_text(ALL_TASKS), "1.1.2")  # byte-exact tick
    assert "parts/1.1.2.txt" in origin.files()
    # The landed task branch is deleted on origin (it was never rewritten before that).
    assert f"refs/heads/{branch}" not in origin.refs() and branch_tip
    assert report.summary is not None and report.summary.endswith(f"deleted {branch} on origin")
    mirror = Mirror(data_dir, normalise_remote(str(origin.path)), GitRunner())
    kept = [p.name for p in mirror.worktrees.iterdir()] if mirror.worktrees.is_dir() else []
    assert [name.startswith("kept-main-") for name in kept] == [True]
    local = git(mirror.path, "for-each-ref", "--format=%(refname)", "refs/heads").split()
    assert local == []  # the work is done detached: no local branch to clean up


def test_an_explicit_title_is_used(origin: Origin, data_dir: Path):
    origin.task_branch("1.1.1")
    report = land(origin, "1.1.1", data_dir, title="Ship\nthe   thing")
    assert report.complete
    assert origin.log()[0][1].splitlines()[0] == "Ship the thing (1.1.1)"


def test_rerunning_a_landed_task_pushes_nothing(
    origin: Origin, data_dir: Path, spy: GitSpy, monkeypatch: pytest.MonkeyPatch
):
    origin.task_branch("1.1.1")
    first = land(origin, "1.1.1", data_dir)
    assert first.complete
    refs = origin.refs()
    monkeypatch.setenv("PATH", spy.env()["PATH"])
    again = land(origin, "1.1.1", data_dir, run_id="run-8")

    assert again.complete
    assert again.attempts == 0
    assert again.sha == first.sha
    assert "already landed" in (again.summary or "")
    assert origin.refs() == refs
    assert "push" not in spy.subcommands()
    assert "fetch" in spy.subcommands()  # it did re-read origin rather than trust a cache


def test_a_race_is_retried_on_a_fresh_base(
    origin: Origin, data_dir: Path, spy: GitSpy, monkeypatch: pytest.MonkeyPatch
):
    origin.task_branch("1.1.3")
    rival = origin.clone()
    for key, value in spy.env(push="race-once", race_clone=rival).items():
        monkeypatch.setenv(key, value)
    report = land(origin, "1.1.3", data_dir)

    assert report.complete
    assert report.attempts == 2
    log = origin.log()
    assert log[0][0] == report.sha
    assert log[1][1].startswith("rival ")  # the rival commit is kept, below ours
    assert log[0][2] == [log[1][0]]
    assert len(origin.task_commits("1.1.3")) == 1
    assert spy.subcommands().count("rebase") == 2


def test_a_base_that_keeps_moving_gives_up_after_max_attempts(
    origin: Origin, data_dir: Path, spy: GitSpy, monkeypatch: pytest.MonkeyPatch
):
    origin.task_branch("1.1.3")
    rival = origin.clone()
    for key, value in spy.env(push="race-always", race_clone=rival).items():
        monkeypatch.setenv(key, value)
    report = land(origin, "1.1.3", data_dir, max_attempts=3)

    assert not report.complete
    assert (report.attempts, report.pushed, report.rebased, report.squash_merged) == (
        3, False, True, True,
    )  # fmt: skip
    assert report.summary == (
        "main kept moving: 3 push(es) rejected as non-fast-forward; run the integration again"
    )
    assert origin.task_commits("1.1.3") == []
    assert halt_detail(report) == report.summary


def test_a_conflict_stops_with_the_paths_and_touches_nothing(origin: Origin, data_dir: Path):
    branch = origin.task_branch("1.1.4", {"shared.txt": "line one\nTASK EDIT\nline three\n"})
    work = origin.clone()
    assert origin.external_commit(work, "shared.txt", "line one\nBASE EDIT\nline three\n")
    refs = origin.refs()
    report = land(origin, "1.1.4", data_dir)

    assert not report.complete
    assert not report.rebased and not report.pushed and report.attempts == 0
    assert report.conflicts is not None and "shared.txt" in report.conflicts
    assert halt_detail(report) == report.conflicts
    assert origin.refs() == refs  # origin, base and task branch exactly as before
    assert branch in {r.rsplit("/", 1)[-1] for r in refs}


def test_protected_base_is_reported_after_one_attempt(origin: Origin, data_dir: Path):
    origin.task_branch("1.1.5")
    origin.protect(option="odw-bypass")
    refs = origin.refs()
    report = land(origin, "1.1.5", data_dir, max_attempts=5)

    assert not report.complete and not report.pushed
    assert report.attempts == 1
    assert "GH006: Protected branch update failed" in (report.summary or "")
    assert "not retried" in (report.summary or "")
    assert origin.refs() == refs

    allowed = land(origin, "1.1.5", data_dir, push_options=["odw-bypass"])
    assert allowed.complete and allowed.attempts == 1
    assert len(origin.task_commits("1.1.5")) == 1


def test_landed_without_a_tick_fails_closed(origin: Origin, data_dir: Path):
    work = origin.clone()
    (work / "x.txt").write_text("x\n")
    git(work, "add", "x.txt")
    git(work, "commit", "-qm", "hand-landed\n\nODW-Task: 1.1.1")
    git(work, "push", "-q", "origin", "HEAD:main")
    origin.task_branch("1.1.1")
    refs = origin.refs()
    report = land(origin, "1.1.1", data_dir)
    assert not report.complete and report.attempts == 0
    assert "not ticked" in (report.summary or "")
    assert origin.refs() == refs


def test_ticked_without_a_landing_commit_fails_closed(origin: Origin, data_dir: Path):
    work = origin.clone()
    (work / "docs" / "roadmap.md").write_text(tick(roadmap_text(ALL_TASKS), "1.1.2"))
    git(work, "commit", "-qam", "ticked by hand")
    git(work, "push", "-q", "origin", "HEAD:main")
    origin.task_branch("1.1.2")
    refs = origin.refs()
    report = land(origin, "1.1.2", data_dir)
    assert not report.complete
    assert "refusing to land it twice" in (report.summary or "")
    assert origin.refs() == refs


def test_unknown_task_and_missing_branch_are_reported(origin: Origin, data_dir: Path):
    branch = origin.task_branch("1.1.1")
    report = integrate(
        str(origin.path), "main", branch, "9.9.9", run_id="r", lock=InProcessMergeLock(),
        data_dir=data_dir,
    )  # fmt: skip
    assert not report.complete and report.rebased and not report.roadmap_marked_done
    assert "9.9.9 is not in the roadmap" in (report.summary or "")
    missing = land(origin, "1.1.2", data_dir)
    assert not missing.complete
    assert "cannot fetch" in (missing.summary or "") and "roadmap-1-1-2" in missing.summary


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"task_id": "1.x"}, "dotted number"),
        ({"run_id": "two words"}, "run id"),
        ({"run_id": "a\nODW-Task: 9.9"}, "run id"),
        ({"base": "-main"}, "base"),
        ({"branch": "a..b"}, "branch"),
        ({"branch": "main"}, "both"),
        ({"roadmap_path": "../roadmap.md"}, "relative"),
        ({"roadmap_path": "/etc/passwd"}, "relative"),
        ({"max_attempts": 0}, "at least 1"),
        ({"repo": "https://u:tok@example.com/r.git"}, "ODW_GIT_TOKEN"),
    ],
    ids=[
        "task",
        "run-space",
        "run-newline",
        "base",
        "branch",
        "same",
        "dotdot",
        "abs",
        "max",
        "url",
    ],
)
def test_bad_input_is_refused_before_anything_happens(tmp_path: Path, kw: dict, message: str):
    kw = dict(kw)
    args = {"repo": "/nonexistent", "base": "main", "branch": "roadmap-1-1-1", "task_id": "1.1.1"}
    args.update({k: kw.pop(k) for k in list(kw) if k in args})
    data_dir = tmp_path / "data"
    with pytest.raises(IntegrationInputError, match=message):
        integrate(
            args["repo"], args["base"], args["branch"], args["task_id"],
            **{"run_id": "r", **kw}, lock=InProcessMergeLock(), data_dir=data_dir,
        )  # fmt: skip
    assert not data_dir.exists()


def test_threads_sharing_a_lock_land_every_task_once(origin: Origin, data_dir: Path):
    tasks = ["1.1.1", "1.1.2", "1.1.3", "1.1.4"]
    for tid in tasks:
        origin.task_branch(tid)
    lock = InProcessMergeLock()
    reports = {}

    def one(tid: str) -> None:
        reports[tid] = land(origin, tid, data_dir, lock=lock)

    threads = [threading.Thread(target=one, args=(t,)) for t in tasks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert all(r.complete for r in reports.values()), reports
    assert all(r.attempts == 1 for r in reports.values())  # the lock left no race to lose
    for tid in tasks:
        assert len(origin.task_commits(tid)) == 1
    assert all(len(parents) <= 1 for _, _, parents in origin.log())
    assert origin.roadmap() == roadmap_text(ALL_TASKS).replace("[ ] 1.1.1", "[x] 1.1.1").replace(
        "[ ] 1.1.2", "[x] 1.1.2"
    ).replace("[ ] 1.1.3", "[x] 1.1.3").replace("[ ] 1.1.4", "[x] 1.1.4")


def test_rerun_after_the_task_branch_was_deleted_still_reports_landed(
    origin: Origin, data_dir: Path
):
    branch = origin.task_branch("1.1.2")
    first = land(origin, "1.1.2", data_dir)
    assert f"refs/heads/{branch}" not in origin.refs()  # deleted after landing
    refs = origin.refs()
    again = land(origin, "1.1.2", data_dir)
    assert again.complete and again.attempts == 0 and again.sha == first.sha
    assert origin.refs() == refs


def test_a_busy_merge_lock_is_reported_not_waited_on_forever(origin: Origin, data_dir: Path):
    from app.gitops.lock import lock_key
    from app.gitops.mirror import normalise_remote

    origin.task_branch("1.1.1")
    lock = InProcessMergeLock()
    refs = origin.refs()
    with lock.hold(lock_key(normalise_remote(str(origin.path)), "main"), timeout=1):
        report = land(origin, "1.1.1", data_dir, lock=lock, lock_timeout=0.2)
    assert not report.complete and report.attempts == 0
    assert "still busy" in (report.summary or "")
    assert origin.refs() == refs


def test_rounds_that_never_reach_the_base_still_end_after_max_attempts(
    origin: Origin, data_dir: Path
):
    """An attempt may go round before it tries the base (a pull request's branch pushed
    to meanwhile); such rounds count, or a branch that kept moving would never stop."""
    origin.task_branch("1.1.3")
    job = LandingJob(
        Landing(str(origin.path), origin.base, "roadmap-1-1-3", "1.1.3", "run-7", data_dir,
                max_attempts=3)
    )  # fmt: skip
    rounds: list[int] = []

    class MovedBeforeTheBase(TaskAttempt):
        def attempt(self, job: LandingJob, wt: Path, steps: Steps) -> IntegrationReport:
            rounds.append(job.attempts)
            if len(rounds) > 10:
                raise RuntimeError("the landing went round and round")  # fails, not hangs
            raise Again("the branch moved before its push; run it again")

    report = job.land(MovedBeforeTheBase(), InProcessMergeLock())
    assert rounds == [0, 0, 0]
    assert (report.complete, report.pushed, report.attempts) == (False, False, 0)
    assert report.summary == "main kept moving: the branch moved before its push; run it again"
    assert origin.task_commits("1.1.3") == []
