"""Process-group execution under a deadline: exit statuses and no survivors."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from actions.proctree import run_process
from app.core.verdict import EXIT_TIMEOUT
from tests.actions.conftest import alive

PY = sys.executable


def test_output_and_exit_code_pass_through(tmp_path: Path) -> None:
    chunks: list[bytes] = []
    code = "import sys; print('out'); print('err', file=sys.stderr); sys.exit(7)"
    result = run_process([PY, "-c", code], cwd=tmp_path, deadline=10, on_output=chunks.append)
    assert result.exit_code == 7 and not result.timed_out
    assert b"out" in b"".join(chunks) and b"err" in b"".join(chunks)


def test_stdin_comes_from_the_prompt_file(tmp_path: Path) -> None:
    prompt = tmp_path / "p.md"
    prompt.write_text("the prompt")
    chunks: list[bytes] = []
    code = "import sys; sys.stdout.write(sys.stdin.read().upper())"
    run_process(
        [PY, "-c", code], cwd=tmp_path, stdin_path=prompt, deadline=10, on_output=chunks.append
    )
    assert b"".join(chunks) == b"THE PROMPT"


def test_timeout_kills_a_child_that_ignores_sigterm(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    code = (
        "import os, signal, subprocess, sys, time\n"
        "c = subprocess.Popen([sys.executable, '-c', 'import signal, time; "
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)'])\n"
        f"open({str(pid_file)!r}, 'w').write(f'{{os.getpid()}} {{c.pid}}')\n"
        "time.sleep(600)\n"
    )
    start = time.monotonic()
    result = run_process([PY, "-c", code], cwd=tmp_path, deadline=1.0, grace=0.3)
    assert result.timed_out and result.exit_code == EXIT_TIMEOUT
    assert result.signals_sent == ["SIGTERM", "SIGKILL"]
    assert result.survivors == [] and not result.cleanup_failed
    assert all(not alive(int(p)) for p in pid_file.read_text().split())
    assert time.monotonic() - start < 30  # ended at the deadline, not by the children


def test_polite_tree_stops_at_sigterm(tmp_path: Path) -> None:
    result = run_process(["sleep", "60"], cwd=tmp_path, deadline=0.5, grace=5)
    assert result.exit_code == EXIT_TIMEOUT
    assert result.signals_sent == ["SIGTERM"]


def test_background_straggler_is_killed_after_a_clean_exit(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    cmd = f"sleep 60 & echo $! > {pid_file}; exit 0"
    start = time.monotonic()
    result = run_process(["/bin/sh", "-c", cmd], cwd=tmp_path, deadline=20, grace=0.5)
    assert result.exit_code == 0 and not result.timed_out
    assert result.stragglers == 1
    assert not alive(int(pid_file.read_text()))
    assert time.monotonic() - start < 30  # the straggler was killed, not waited for (60 s)


def test_missing_program_is_a_spawn_error(tmp_path: Path) -> None:
    result = run_process([str(tmp_path / "nope")], cwd=tmp_path, deadline=5)
    assert result.exit_code == 127 and result.spawn_error


def test_killed_by_a_signal(tmp_path: Path) -> None:
    result = run_process(["/bin/sh", "-c", "kill -9 $$"], cwd=tmp_path, deadline=5)
    assert result.signal == 9 and result.exit_code == 137
