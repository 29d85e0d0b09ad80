"""Ticking a person-merged task on the base, through the landing loop, on real origins."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.roadmap_edit import is_ticked
from app.gitops.integrate import PROTECTED_BASE
from app.gitops.lock import InProcessMergeLock
from app.gitops.tick import TickReport, tick_on_base
from tests.gitops.conftest import GitSpy
from tests.gitops.origins import Origin

NOTE = "Pull request #7 was merged by octocat."


def _tick(origin: Origin, data_dir: Path, task_id: str = "1.1.2") -> TickReport:
    branch = "roadmap-" + task_id.replace(".", "-")  # gone after the merge: never fetched
    return tick_on_base(
        str(origin.path), origin.base, branch, task_id, note=NOTE, run_id="run-9",
        lock=InProcessMergeLock(), data_dir=data_dir,
    )  # fmt: skip


def test_a_person_merged_task_is_ticked_on_the_base_once(origin: Origin, data_dir: Path) -> None:
    before = origin.head()
    report = _tick(origin, data_dir)
    assert report.ticked and report.sha == origin.head()
    assert is_ticked(origin.roadmap(), "1.1.2") and not is_ticked(origin.roadmap(), "1.1.1")
    sha, body, parents = origin.log()[0]
    assert parents == [before]
    assert body.startswith("Mark 1.1.2 done in docs/roadmap.md\n\n" + NOTE)
    assert "ODW-Run: run-9" in body and "ODW-Task" not in body  # a tick, not a landing
    again = _tick(origin, data_dir)
    assert (again.ticked, again.sha) == (True, None)
    assert origin.head() == sha  # nothing pushed the second time


def test_a_race_ticks_on_the_fresh_base(
    origin: Origin, data_dir: Path, spy: GitSpy, monkeypatch: pytest.MonkeyPatch
) -> None:
    rival = origin.clone()
    for key, value in spy.env(push="race-once", race_clone=rival).items():
        monkeypatch.setenv(key, value)
    report = _tick(origin, data_dir)
    assert report.ticked and report.sha == origin.head()
    log = origin.log()
    assert log[1][1].startswith("rival ")  # the rival commit is kept, below the tick
    assert log[0][2] == [log[1][0]]
    assert is_ticked(origin.roadmap(), "1.1.2")


def test_a_protected_base_is_reported_and_not_retried(
    origin: Origin, data_dir: Path, spy: GitSpy, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin.protect()
    refs = origin.refs()
    monkeypatch.setenv("PATH", spy.env()["PATH"])
    report = _tick(origin, data_dir)
    assert not report.ticked and report.sha is None
    assert PROTECTED_BASE in report.summary
    assert spy.subcommands().count("push") == 1
    assert origin.refs() == refs
