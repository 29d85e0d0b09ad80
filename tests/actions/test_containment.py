"""Containment: every descendant of an attempt is found and killed, or the attempt says so.

Real processes only: a daemon that re-forks into a new session every 10 ms, and
a process frozen by the cgroup v1 freezer that no signal can end until thawed.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from actions.containment import Containment, Kind, own_cgroup
from actions.proctree import run_process
from app.core.verdict import EXIT_CLEANUP_FAILED, EXIT_TIMEOUT
from tests import needs
from tests.actions.conftest import alive

PY = sys.executable

DAEMON = textwrap.dedent(
    """
    import os, sys, time
    log, stop = sys.argv[1], sys.argv[2]
    end = time.time() + 60  # a safety net for the machine running the tests
    while time.time() < end and not os.path.exists(stop):
        if os.fork():
            os._exit(0)
        os.setsid()
        with open(log, "a") as fh:
            fh.write(f"{os.getpid()}\\n")
        time.sleep(0.01)
    """
)


class Daemon:
    def __init__(self, folder: Path) -> None:
        self.script = folder / "daemon.py"
        self.script.write_text(DAEMON)
        self.log = folder / "daemon.log"
        self.stop = folder / "daemon.stop"

    @property
    def command(self) -> str:
        return f"{PY} {self.script} {self.log} {self.stop}"

    @property
    def started(self) -> str:
        """Shell that waits until the daemon has escaped into its own session at
        least once (not a fixed sleep: Python may start slowly on a loaded machine)."""
        return f"{self.command} & while [ ! -s {self.log} ]; do sleep 0.01; done"

    def pids(self) -> list[int]:
        text = self.log.read_text() if self.log.exists() else ""
        return [int(p) for p in text.split()]

    def assert_gone(self) -> None:
        hops = self.pids()
        assert hops, "the daemon never ran"
        time.sleep(0.5)
        assert self.pids() == hops, "the daemon is still forking"
        assert not [p for p in hops if alive(p)]


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    d = Daemon(tmp_path)
    yield d
    d.stop.write_text("stop")  # ends a survivor of a failing test within 10 ms


KINDS = pytest.mark.parametrize(
    "kind",
    [
        pytest.param(
            "cgroup",
            marks=[pytest.mark.unavailable(*needs.CGROUP_V2)] if own_cgroup() is None else [],
        ),
        "sweep",
    ],
    ids=["cgroup", "environment-tag-sweep"],
)


@KINDS
def test_a_reforking_daemon_does_not_survive_a_clean_exit(
    tmp_path: Path, daemon: Daemon, kind: Kind
) -> None:
    cmd = f"{daemon.started}; exit 0"
    result = run_process(
        ["/bin/sh", "-c", cmd], cwd=tmp_path, deadline=20, grace=0.5, containment=kind
    )
    assert result.containment == kind
    daemon.assert_gone()
    assert result.exit_code == 0 and not result.cleanup_failed
    assert result.stragglers >= 1


@KINDS
def test_a_reforking_daemon_does_not_survive_the_deadline(
    tmp_path: Path, daemon: Daemon, kind: Kind
) -> None:
    cmd = f"{daemon.command} & sleep 60"
    result = run_process(
        ["/bin/sh", "-c", cmd], cwd=tmp_path, deadline=1, grace=0.5, containment=kind
    )
    daemon.assert_gone()
    assert result.timed_out and result.exit_code == EXIT_TIMEOUT
    assert result.survivors == [] and not result.cleanup_failed


FREEZER = Path("/sys/fs/cgroup/freezer")


@pytest.fixture
def freezer(tmp_path: Path) -> Iterator[Path]:
    """A frozen cgroup v1 freezer: a process moved in stays alive through SIGKILL until thawed."""
    path = FREEZER / f"odw-test-{secrets.token_hex(6)}"
    try:
        path.mkdir()
        (path / "freezer.state").write_text("FROZEN")
    except OSError:
        needs.unavailable(needs.CGROUP_V1_FREEZER)
    yield path
    (path / "freezer.state").write_text("THAWED")  # the pending SIGKILL now ends it
    end = time.monotonic() + 10
    while (path / "cgroup.procs").read_text().strip() and time.monotonic() < end:
        time.sleep(0.05)
    path.rmdir()


def _thaw_and_tidy(freezer: Path, pids: list[int]) -> None:
    """Let the pending SIGKILL end `pids`, then remove the cgroup v2 the runner left.

    The runner leaves a cgroup it could not empty for an operator to inspect.
    """
    left = [Path(f"/proc/{p}/cgroup").read_text() for p in pids]
    (freezer / "freezer.state").write_text("THAWED")
    for pid in pids:
        end = time.monotonic() + 10
        while alive(pid) and time.monotonic() < end:
            time.sleep(0.05)
    parent = own_cgroup()
    for text in left:
        rel = next(x for x in text.splitlines() if x.startswith("0::"))[3:].strip("/")
        if parent is not None and rel.startswith("odw-"):
            (parent / rel).rmdir()


@KINDS
@pytest.mark.parametrize(
    ("tail", "deadline", "timed_out"),
    # The clean exit waits until the child is frozen, not a fixed time.
    [
        ("until grep -q . {procs}; do sleep 0.01; done; exit 0", 20.0, False),
        ("sleep 60", 1.0, True),
    ],
    ids=["after-a-clean-exit", "after-the-deadline"],
)
def test_a_process_that_cannot_be_killed_is_reported_as_cleanup_failed(
    tmp_path: Path, freezer: Path, kind: Kind, tail: str, deadline: float, timed_out: bool
) -> None:
    procs = freezer / "cgroup.procs"
    cmd = f"/bin/sh -c 'echo $$ > {procs}; sleep 600' & {tail.format(procs=procs)}"
    result = run_process(
        ["/bin/sh", "-c", cmd],
        cwd=tmp_path,
        deadline=deadline,
        grace=0.3,
        kill_wait=1.0,
        containment=kind,
    )
    frozen = [int(p) for p in (freezer / "cgroup.procs").read_text().split()]
    _thaw_and_tidy(freezer, frozen)
    assert frozen, "the frozen child never started"
    assert result.timed_out is timed_out
    assert result.exit_code == EXIT_CLEANUP_FAILED and result.cleanup_failed
    assert set(frozen) <= set(result.survivors)
    assert result.signals_sent[-1] == "SIGKILL"


def test_odw_stage_leaves_no_daemon_behind(repo, stage, daemon: Daemon) -> None:
    """The issue's case end to end: a daemon started by a passing agent dies with its attempt."""
    agent = f'{daemon.started}; echo "$ODW_COMPLETION_WORD $ODW_COMPLETION_TOKEN"'
    result = stage(repo.clone, agent, stage="review")
    daemon.assert_gone()
    exit_check = result.verdict.check("exit_code")
    assert exit_check is not None and exit_check.code == 0
    assert "leftover process(es) were terminated" in exit_check.reason
    assert result.verdict.fault is None


def test_a_cgroup_left_by_a_killed_runner_is_emptied_and_removed(tmp_path: Path) -> None:
    """A runner killed before its cleanup leaves its cgroup; the next attempt clears it."""
    parent = own_cgroup()
    if parent is None:
        needs.unavailable(needs.CGROUP_V2)
    dead = subprocess.Popen(["sleep", "0"])  # any finished pid will do
    dead.wait()
    stale = parent / f"odw-{dead.pid}-{secrets.token_hex(4)}"
    stale.mkdir()
    orphan = subprocess.Popen(["sleep", "60"])
    try:
        (stale / "cgroup.procs").write_text(str(orphan.pid))
        Containment.open("cgroup").close()
        assert orphan.wait(timeout=10) == -9
        Containment.open("cgroup").close()
        assert not stale.exists()
    finally:
        orphan.kill()
        orphan.wait()
        if stale.exists():
            stale.rmdir()
