"""The driver: feed inputs to `decide`, persist events, execute effects, loop.

One component for every mode: every input, here and in the App, goes through
the one step (`step.advance`: decide, append at the expected version, then the
effects), and a run ends when the core's `run_over` says so. Here the log is
in memory (or local mode's store) and effects are performed at once; the App
takes the same step on its store's log and puts the effects in its outbox. A
crash leaves a log that says what was asked; `open` on an existing log replays
it and resumes: landed tasks are not re-run, attempts whose process died come
back as infra faults, and an interrupted integration is never blindly repeated:
the base is re-read first, and only when it shows no landing does the
integration run again.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.core import events as ev
from app.core.decide import run_over
from app.core.effects import Effect
from app.core.inputs import (
    EndRun,
    Input,
    IntegrationFinished,
    MoveName,
    OperatorMove,
    StageFinished,
    StartRun,
)
from app.core.keys import attempt_key
from app.core.outstanding import outstanding
from app.core.result import run_result
from app.core.state import RunState, apply
from app.engine.perform import perform
from app.engine.ports import (
    AllowOneReset,
    AssessPort,
    Clock,
    EventLog,
    GateJudgePort,
    IntegratePort,
    LiveAttempt,
    SalvagePort,
    StageCompletion,
    StagePort,
    TokenSource,
)
from app.engine.step import advance


class EngineError(RuntimeError):
    """The loop cannot continue (a step limit, a missing start); nothing is lost."""


@dataclass(frozen=True)
class ScheduledMove:
    """An operator move fed once `after` completions have been recorded (or when idle)."""

    after: int
    move: MoveName
    task: str | None = None
    by: str = "operator"
    reason: str = ""
    overrides: dict[str, Any] = field(default_factory=dict)


@dataclass
class Ports:
    log: EventLog
    stages: StagePort
    integrator: IntegratePort
    assessor: AssessPort
    salvager: SalvagePort
    tokens: TokenSource
    clock: Clock
    judge: GateJudgePort = field(default_factory=AllowOneReset)


class Engine:
    """Runs one run's log to quiescence through the given ports."""

    def __init__(
        self, ports: Ports, *, wait_timeout: float | None = None, max_steps: int = 100_000
    ):
        self.ports = ports
        self.wait_timeout = wait_timeout
        self.max_steps = max_steps
        self.state = RunState()
        self.completions = 0
        self.new_events: list[dict[str, Any]] = []
        self._queue: deque[Input] = deque()

    # -- lifecycle --------------------------------------------------------
    def open(self, start: StartRun | None = None) -> RunState:
        """Start a fresh run from `start`, or replay the stored log and resume it."""
        stored = self.ports.log.load()
        if not stored:
            if start is None:
                raise EngineError("the event log is empty and no run start was given")
            self.feed(start)
            return self.state
        self.state = replay(stored)
        if not self.state.ended:
            self._resume()
        return self.state

    def _resume(self) -> None:
        s = self.state
        live = [
            LiveAttempt(
                key=attempt_key(s.run_id, t.id, a.stage, a.number, a.lane),
                task=t.id,
                stage=a.stage,
                lane=a.lane,
                attempt=a.number,
                token=a.token,
            )
            for t, a in s.live_attempts()
        ]
        if live:
            self._queue.extend(self._stamp(c) for c in self.ports.stages.recover(live))
        for effect in outstanding(s):
            # An interrupted integration is never repeated blindly (`perform` re-reads
            # the base first); the integrator itself refuses to land a task twice.
            self._execute(effect, again=True)

    def run(self, moves: Iterable[ScheduledMove] = ()) -> dict[str, Any]:
        """Drive until nothing is running or waiting, apply moves, end, and report."""
        if not self.state.started:
            raise EngineError("open() the run first")
        if self.state.ended:
            return run_result(self.state)
        pending = deque(sorted(moves, key=lambda m: m.after))
        for _ in range(self.max_steps):
            if not self._queue and pending and pending[0].after <= self.completions:
                self.feed(self._move(pending.popleft()))
            elif self.step():
                continue
            elif pending:
                self.feed(self._move(pending.popleft()))
            elif run_over(self.state, stopped_waits=False):
                # Nobody here can resume a stopped run: with nothing queued, running
                # or awaited, the run is over.
                self.feed(EndRun(at=self.ports.clock()))
                return run_result(self.state)
            else:
                waiting = [t.id for t in self.state.tasks.values() if t.awaiting]
                raise EngineError(f"tasks {waiting} await answers nothing here will give")
        raise EngineError(f"the run did not settle within {self.max_steps} steps")

    def step(self) -> bool:
        """Feed one queued input, or wait once for completions; False when idle."""
        if self._queue:
            self.feed(self._queue.popleft())
            return True
        if self.state.live_attempts():
            for c in self.ports.stages.wait(self.wait_timeout):
                self._queue.append(self._stamp(c))
            return True
        return False

    # -- one input --------------------------------------------------------
    def feed(self, inp: Input) -> list[Effect]:
        """Decide, persist, then execute; results of effects queue up as inputs."""
        if isinstance(inp, StageFinished | IntegrationFinished):
            self.completions += 1
        done = advance(self.state, inp, self.ports.tokens, self.ports.log, self._execute)
        self.new_events.extend(done.rows)
        return done.effects

    def _execute(self, effect: Effect, *, again: bool = False) -> None:
        result = perform(effect, self.ports, again=again)
        if result is not None:
            self._queue.append(result)

    def _stamp(self, c: StageCompletion) -> StageFinished:
        return StageFinished(
            at=self.ports.clock(),
            task=c.task,
            stage=c.stage,
            token=c.token,
            verdict=c.verdict,
            fault=c.fault,
        )

    def _move(self, m: ScheduledMove) -> OperatorMove:
        return OperatorMove(
            at=self.ports.clock(),
            move=m.move,
            task=m.task,
            by=m.by,
            reason=m.reason,
            overrides=dict(m.overrides),
        )


def replay(rows: Sequence[dict[str, Any]]) -> RunState:
    """Fold stored JSON events; unknown types or versions raise ReplayError."""
    state = RunState()
    for data in rows:
        apply(state, ev.event_from_json(data))
    return state
