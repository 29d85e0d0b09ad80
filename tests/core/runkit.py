"""A tiny harness for given-events / when-input / then-events-and-effects tests.

It drives the real `decide` with counter tokens and a fixed clock, keeps the
effects it returned, and builds stage evidence with the rehearsal's outcome
words, so a test reads like the rule it checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from app.core import events as ev
from app.core.config import RunConfig
from app.core.decide import decide
from app.core.discovery import Survivor
from app.core.effects import DispatchStage, Effect
from app.core.inputs import Input, OperatorMove, StageFinished, StartRun
from app.core.state import RunState, apply
from app.engine.scripted import completion

AT = datetime(2024, 1, 1, tzinfo=UTC)
CHAIN = (
    "## Phase 1\n"
    "- [ ] 1.1.1. First\n"
    "- [ ] 1.1.2. Second. Requires 1.1.1.\n"
    "- [ ] 1.1.3. Third. Requires 1.1.2.\n"
    "- [ ] 1.2.1. Independent\n"
)


class Run:
    def __init__(
        self,
        roadmap: str = CHAIN,
        survivors: Sequence[Survivor] = (),
        held: Sequence[str] = (),
        **config: Any,
    ) -> None:
        self.state = RunState()
        self.events: list[ev.Event] = []
        self.effects: list[Effect] = []
        self.dispatched: dict[tuple[str, str], DispatchStage] = {}
        self._n = 0
        self.last: tuple[list[ev.Event], list[Effect]] = ([], [])
        self.feed(
            StartRun(
                at=AT,
                run_id="r",
                roadmap=roadmap,
                config=RunConfig(**config),
                survivors=list(survivors),
                held=list(held),
            )
        )

    def token(self) -> str:
        self._n += 1
        return f"token-{self._n:06d}"

    def feed(self, inp: Input) -> tuple[list[ev.Event], list[Effect]]:
        events, effects = decide(self.state, inp, self.token)
        for e in events:
            apply(self.state, e)
        self.events += events
        self.effects += effects
        for f in effects:
            if isinstance(f, DispatchStage):
                self.dispatched[(f.task, f.lane)] = f
        self.last = (events, effects)
        return self.last

    def live(self, task: str, lane: str = "") -> DispatchStage:
        d = self.dispatched[(task, lane)]
        assert self.state.task(task).live.get(lane) is not None, f"{task}/{lane} is not live"
        return d

    def finish(
        self, task: str, word: str = "pass", lane: str = ""
    ) -> tuple[list[ev.Event], list[Effect]]:
        d = self.live(task, lane)
        c = completion(d, word)
        return self.feed(
            StageFinished(
                at=AT, task=c.task, stage=c.stage, token=c.token, verdict=c.verdict, fault=c.fault
            )
        )

    def finish_stage(self, task: str, word: str = "pass") -> tuple[list[ev.Event], list[Effect]]:
        """Finish every live lane of the task's current stage with the same word."""
        out: tuple[list[ev.Event], list[Effect]] = ([], [])
        for lane in list(self.state.task(task).live):
            out = self.finish(task, word, lane)
        return out

    def drive_to(self, task: str, stage: str) -> None:
        """Pass stages until `task` is at `stage`."""
        for _ in range(20):
            if self.state.task(task).stage == stage and self.state.task(task).live:
                return
            self.finish_stage(task)
        raise AssertionError(f"{task} never reached {stage}")

    def move(
        self, move: str, task: str | None = None, reason: str = "test", **kw: Any
    ) -> tuple[list[ev.Event], list[Effect]]:
        return self.feed(
            OperatorMove(at=AT, move=move, task=task, by="maintainer", reason=reason, **kw)  # type: ignore[arg-type]
        )

    def status(self, task: str) -> str:
        return self.state.task(task).status


def types(events: list[ev.Event]) -> list[str]:
    return [e.type for e in events]


def of(kind: type, items: list[Any]) -> list[Any]:
    return [i for i in items if isinstance(i, kind)]
