"""Gates: the configured check commands, run by the runner and never by the agent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from actions.proctree import run_process
from actions.stream import HeadTailCapture
from app.core.verdict import GateResult

DEFAULT_GATE_TIMEOUT = 180.0  # seed 004: approved host commands keep three minutes
TAIL_CHARS = 4000


def run_gate(
    command: str,
    *,
    workdir: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
    grace: float = 5.0,
) -> GateResult:
    capture = HeadTailCapture(head=0, tail=64 * 1024)
    result = run_process(
        ["/bin/sh", "-c", command],
        cwd=workdir,
        env=env,
        deadline=timeout,
        grace=grace,
        on_output=capture.feed,
    )
    tail = capture.tail_text(TAIL_CHARS)
    if result.spawn_error:
        tail = result.spawn_error
    elif result.timed_out:
        tail += f"\n[odw: gate timed out after {timeout:g}s; process tree terminated]"
    return GateResult(
        command=command,
        code=result.exit_code,
        status="passed" if result.exit_code == 0 else "failed",
        tail=tail,
        duration=round(result.duration, 3),
    )


def run_gates(
    commands: Sequence[str],
    *,
    workdir: Path,
    timeout: float = DEFAULT_GATE_TIMEOUT,
    env: Mapping[str, str] | None = None,
) -> list[GateResult]:
    """Every gate runs, even after one fails, so the verdict shows them all."""
    return [run_gate(c, workdir=workdir, timeout=timeout, env=env) for c in commands]
