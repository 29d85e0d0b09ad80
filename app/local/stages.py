"""The stage port for local mode: each attempt in its own worktree, on a thread pool.

Agent stages run `odw stage` through the local runner (a subprocess in its own
session); the `gates` stage runs the configured commands on the task branch
here, with no agent. Completions are queued as they finish, in any order.
Every attempt is recorded on disk before it starts (`attempts.py`), so a rerun
after a crash can kill what the dead run left behind and report it as an infra
fault, which the core retries in place from what origin's task branch holds.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from actions.gates import DEFAULT_GATE_TIMEOUT
from actions.stage import DEFAULT_GRACE
from app.core.effects import DispatchStage
from app.core.judging import GATE_CHECK_PREFIX, Fault
from app.core.naming import slug
from app.core.verdict import Check, Verdict
from app.engine.ports import LiveAttempt, StageCompletion
from app.gitops.evidence.repo import LocalRepo
from app.local.attempts import TAG_VAR, AttemptFiles, AttemptRecord, kill_attempt
from app.local.run_options import LocalSettings
from app.local.stage_runner import (
    LocalRunnerError,
    StageRun,
    remove_worktree,
    run_local_gates,
    run_local_stage,
)

# Verdict faults that say nothing about the branch: the runner or the agent
# process died, or the push never reached origin. Reported as infra faults.
INFRA_VERDICT_FAULTS = frozenset({"push-failed", "runner", "spawn-failed", "cleanup-failed"})
SIGNAL_EXIT = 128

Listener = Callable[[str, DispatchStage], None]


def attempt_dir(run_dir: Path, d: DispatchStage) -> Path:
    lane = f"-{d.lane}" if d.lane else ""
    return run_dir / "stages" / slug(d.task) / f"{d.stage}-{d.attempt}{lane}"


class LocalStages:
    def __init__(
        self,
        repo: LocalRepo,
        settings: LocalSettings,
        run_dir: Path,
        *,
        grace: float = DEFAULT_GRACE,
        gate_timeout: float = DEFAULT_GATE_TIMEOUT,
        listener: Listener | None = None,
    ) -> None:
        self.repo = repo
        self.settings = settings
        self.run_dir = run_dir
        self.grace = grace
        self.gate_timeout = gate_timeout
        self.listener = listener
        self.files = AttemptFiles(run_dir / "attempts")
        self._done: queue.Queue[StageCompletion] = queue.Queue()
        # One daemon thread per attempt (the engine bounds how many are live): an
        # interrupted run must exit even if an attempt was still starting, and a
        # pool's worker caught half-registered by Ctrl-C kept the interpreter
        # waiting at exit. What such an attempt started is killed at its spawn
        # (`abort`), or by the next run's `recover`.
        self._aborted = threading.Event()

    # -- StagePort --------------------------------------------------------
    def start(self, dispatch: DispatchStage) -> None:
        self.files.write(
            AttemptRecord(
                key=dispatch.key, task=dispatch.task, stage=dispatch.stage, token=dispatch.token
            )
        )
        threading.Thread(
            target=self._run, args=(dispatch,), name=f"odw-stage-{dispatch.key}", daemon=True
        ).start()

    def wait(self, timeout: float | None) -> list[StageCompletion]:
        try:
            out = [self._done.get(timeout=timeout)]
        except queue.Empty:
            return []
        while True:
            try:
                out.append(self._done.get_nowait())
            except queue.Empty:
                return out

    def recover(self, attempts: Sequence[LiveAttempt]) -> list[StageCompletion]:
        """Attempts of a dead run: kill what survives of them, report each as infra."""
        out = []
        for a in attempts:
            record = self.files.read(a.key)
            killed = 0
            if record is not None:
                killed = kill_attempt(record)
                if record.worktree:
                    remove_worktree(self.repo.path, Path(record.worktree))
                self.files.remove(a.key)
            what = f"; {killed} leftover process(es) killed" if killed else ""
            out.append(
                StageCompletion(
                    a.task,
                    a.stage,
                    a.token,
                    fault=Fault(kind="infra", detail=f"stage process died with its run{what}"),
                )
            )
        return out

    def close(self) -> None:
        """Nothing to release: attempt threads are daemons and end with their attempt."""

    def abort(self) -> None:
        """Interrupted: kill every attempt still running, so the threads end at once.

        The log still calls them live; the next run reports them as infra faults.
        An attempt still starting when the flag is set kills itself at its spawn
        (`_attempt`), so no agent outlives the interrupt.
        """
        self._aborted.set()
        directory = self.files.directory
        for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
            record = _read_path(path)
            if record is not None:
                kill_attempt(record, settle=1.0)

    # -- one attempt ------------------------------------------------------
    def _run(self, d: DispatchStage) -> None:
        if self._aborted.is_set():
            return  # interrupted before this attempt began: start nothing
        if self.listener is not None:
            self.listener("started", d)
        try:
            completion = self._attempt(d)
        except LocalRunnerError as exc:
            completion = _infra(d, f"local runner: {exc}")
        except Exception as exc:  # any adapter crash is an infra fault
            completion = _infra(d, f"local runner crashed: {type(exc).__name__}: {exc}")
        self.files.remove(d.key)
        self._done.put(completion)

    def _attempt(self, d: DispatchStage) -> StageCompletion:
        out_dir = attempt_dir(self.run_dir, d)
        env = {TAG_VAR: d.token}

        def on_worktree(path: Path) -> None:
            self.files.update(d.key, worktree=str(path))

        def on_spawn(pid: int) -> None:
            self.files.update(d.key, pid=pid)
            # The pid is recorded before the flag is read, and `abort` sets the
            # flag before it reads the records: one of the two kills this process.
            record = self.files.read(d.key) if self._aborted.is_set() else None
            if record is not None:
                kill_attempt(record, settle=1.0)

        run: StageRun
        if d.stage == "gates":
            run = run_local_gates(
                self.repo.path,
                base=d.base,
                task=d.task,
                token=d.token,
                gates=self.settings.gates,
                gate_timeout=self.gate_timeout,
                branch=d.branch,
                out_dir=out_dir,
                env=env,
                on_worktree=on_worktree,
            )
        else:
            run = run_local_stage(
                self.repo.path,
                base=d.base,
                task=d.task,
                stage=d.stage,
                token=d.token,
                agent=d.extras.get("agent") or self.settings.agent,
                deadline=d.deadline_seconds,
                grace=self.grace,
                gate_timeout=self.gate_timeout,
                branch=d.branch,
                identity=self.settings.identity,
                context_text=context_text(d),
                out_dir=out_dir,
                env=env,
                on_worktree=on_worktree,
                on_spawn=on_spawn,
                fresh=d.fresh,
            )
        return evidence(d, run.verdict)


def evidence(d: DispatchStage, verdict: Verdict) -> StageCompletion:
    """The verdict as the core should see it; a dead process becomes an infra fault."""
    code = verdict.exit_code
    if verdict.fault in INFRA_VERDICT_FAULTS:
        return _infra(d, f"{d.stage} attempt ended by an infrastructure fault: {verdict.fault}")
    if verdict.fault == "crash" and code is not None and code > SIGNAL_EXIT:
        return _infra(d, f"the agent process died (exit {code}) without its marker")
    plan = verdict.check("execplan")
    if plan is not None and plan.status == "failed":
        # The plan stage is judged by its committed ExecPlan too: a contract gate
        # the plan stage itself can retry.
        gate = Check(name=GATE_CHECK_PREFIX + "contract", status="failed", reason=plan.reason)
        verdict = verdict.model_copy(update={"checks": [*verdict.checks, gate]})
    return StageCompletion(d.task, d.stage, d.token, verdict=verdict)


def context_text(d: DispatchStage) -> str | None:
    """Feedback, tickets and operator instructions the core attached, for the prompt."""
    labels = {
        "instructions": "Operator instructions",
        "feedback": "Feedback from the previous attempt",
        "ticket": "Failure ticket to resolve",
        "residualRisk": "Advisory residual risk",
    }
    parts = [f"## {labels[k]}\n\n{v.strip()}\n" for k, v in d.extras.items() if k in labels and v]
    return "\n".join(parts) if parts else None


def _read_path(path: Path) -> AttemptRecord | None:
    try:
        return AttemptRecord(**json.loads(path.read_text("utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def _infra(d: DispatchStage, detail: str) -> StageCompletion:
    return StageCompletion(d.task, d.stage, d.token, fault=Fault(kind="infra", detail=detail))
