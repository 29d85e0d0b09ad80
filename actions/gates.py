"""Gates: the configured check commands, run by the runner and never by the agent."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from actions import gitwork
from actions.proctree import run_process
from actions.stream import HeadTailCapture
from app.core.credentials import without_credentials
from app.core.verdict import Check, GateResult, Verdict

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


def gates_verdict(
    workdir: Path,
    *,
    task: str,
    token: str,
    gates: Sequence[str],
    gate_timeout: float = DEFAULT_GATE_TIMEOUT,
    branch: str,
    where: str,
    env: Mapping[str, str] | None = None,
) -> Verdict:
    """The `gates` stage's verdict: every configured gate run to its end on `workdir`.

    No agent runs at this stage, and the verdict says so: its marker and
    exit-code checks are skipped with that reason, and the core judges an
    agentless stage by its gates alone. Shared by local mode and `odw stage
    --stage gates` on an Actions runner.
    """
    started = time.monotonic()
    head = gitwork.head(workdir)
    results = run_gates(
        gates,
        workdir=workdir,
        timeout=gate_timeout,
        env=without_credentials({**os.environ, **(env or {})}),
    )
    bad = [g for g in results if g.status != "passed"]
    if not gates:
        gates_check = Check(name="gates", status="skipped", reason="no gates configured")
    elif bad:
        gates_check = Check(
            name="gates", status="failed", reason="failed: " + "; ".join(g.command for g in bad)
        )
    else:
        gates_check = Check(name="gates", status="passed", reason=f"{len(results)} gate(s) passed")
    return Verdict(
        stage="gates",
        task=task,
        token=token,
        passed=not bad,
        checks=[
            Check(
                name="completion_marker",
                status="skipped",
                reason="no agent runs at the gates stage: the host ran every configured "
                f"gate to its end on {where} ({head})",
            ),
            Check(name="exit_code", status="skipped", reason="no agent process at this stage"),
            gates_check,
        ],
        gates=results,
        branch=branch,
        head_before=head,
        head_after=head,
        timings={"gates": round(time.monotonic() - started, 3)},
        output_tail="\n".join(f"$ {g.command} (exit {g.code})\n{g.tail}" for g in bad)[-8000:],
    )
