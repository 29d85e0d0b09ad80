"""Random runs through the real core, with the issue's invariants checked at every step."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from app.core import events as ev
from app.core.assessment import Assessment, SalvageResult
from app.core.effects import DispatchStage
from app.core.events import event_from_json, event_to_json
from app.core.inputs import (
    AssessmentFinished,
    GateJudged,
    Input,
    IntegrationFinished,
    SalvageFinished,
    StageFinished,
)
from app.core.integration import IntegrationReport
from app.core.state import fold
from app.engine.scripted import completion
from tests.core.runkit import AT, Run

ROADMAP = (
    "## Phase 1\n"
    "- [ ] 1.1.1. A\n"
    "- [ ] 1.1.2. B. Requires 1.1.1.\n"
    "- [ ] 1.1.3. C. Requires 1.1.1 and 1.2.1.\n"
    "- [ ] 1.2.1. D\n"
    "- [ ] 1.2.2. E. Requires phase 1.1.\n"
)
TASKS = ["1.1.1", "1.1.2", "1.1.3", "1.2.1", "1.2.2"]
WORDS = st.sampled_from(
    [
        "pass",
        "pass",
        "pass",
        "approve",
        "no-marker",
        "exit:1",
        "crash",
        "timeout",
        "schema-invalid",
        "provider:503",
        "auth",
        "gate:build:a",
        "gate:build:b",
        "gate:static:x",
        "gate:review:r",
        "gate:marker:m",
        "changes:x",
        "changes:y",
    ]
)
MOVES = st.sampled_from(["retry", "rearm", "complete", "force-start", "halt", "resume"])
LANDED = IntegrationReport(
    ok=True, rebased=True, squash_merged=True, pushed=True, roadmap_marked_done=True
)


class CoreMachine(RuleBasedStateMachine):
    run: Run

    @initialize(
        parallel=st.integers(1, 3),
        attempts=st.integers(1, 3),
        budget=st.integers(0, 2),
        route=st.integers(0, 2),
    )
    def start(self, parallel, attempts, budget, route):
        self.run = Run(
            ROADMAP,
            maxParallel=parallel,
            stageAttempts=attempts,
            gateRetryBudget=budget,
            routeBudget=route,
            maxReviewRounds=3,
        )
        self.check(self.run.events, self.run.effects, hard_before=False)

    def feed(self, inp: Input) -> None:
        stop = self.run.state.stop
        hard = stop is not None and stop.hard
        resuming = getattr(inp, "move", None) == "resume"
        events, effects = self.run.feed(inp)
        self.check(events, effects, hard_before=hard and not resuming)

    def check(self, events, effects, *, hard_before: bool) -> None:
        s = self.run.state
        dispatches = [f for f in effects if isinstance(f, DispatchStage)]
        if hard_before:
            assert not dispatches, "dispatched after an auth failure or halt"
        roadmap = s.effective_roadmap()
        for d in dispatches:
            t = s.task(d.task)
            assert t.forced or not roadmap.missing(roadmap.get(d.task)), (
                f"{d.task} dispatched with unmet dependencies"
            )
        for e in events:
            if isinstance(e, ev.GateCharged):
                assert e.charges <= e.budget, "gate charged past its budget"
        for t in s.tasks.values():
            assert t.infra_faults <= s.config.stage_attempts, "infra retries beyond stageAttempts"

    @precondition(lambda self: bool(self.run.state.live_attempts()))
    @rule(data=st.data(), word=WORDS)
    def finish_an_attempt(self, data, word):
        live = self.run.state.live_attempts()
        t, a = data.draw(st.sampled_from(live))
        d = self.run.dispatched[(t.id, a.lane)]
        if word.startswith("changes:") and a.stage not in ("review", "design-review"):
            word = "pass"
        c = completion(d, word)
        self.feed(
            StageFinished(
                at=AT, task=c.task, stage=c.stage, token=c.token, verdict=c.verdict, fault=c.fault
            )
        )

    @rule(data=st.data(), outcome=st.sampled_from(["landed", "conflict", "fault"]))
    def answer_a_request(self, data, outcome):
        waiting = [t for t in self.run.state.tasks.values() if t.awaiting]
        if not waiting:
            return
        t = data.draw(st.sampled_from(waiting))
        if t.awaiting == "integrate":
            report = LANDED if outcome == "landed" else IntegrationReport(conflicts="c")
            self.feed(
                IntegrationFinished(
                    at=AT,
                    task=t.id,
                    report=None if outcome == "fault" else report,
                    fault="crash" if outcome == "fault" else None,
                )
            )
        elif t.awaiting == "assess":
            self.feed(
                AssessmentFinished(
                    at=AT,
                    task=t.id,
                    assessment=Assessment(
                        classification=data.draw(
                            st.sampled_from(["adopt-partial", "discard", "continue-manual"])
                        )
                    ),
                )
            )
        elif t.awaiting == "salvage":
            self.feed(SalvageFinished(at=AT, task=t.id, salvage=SalvageResult(classification="x")))
        elif t.awaiting == "judge":
            decision = data.draw(st.sampled_from(["continue", "recover", "fail"]))
            self.feed(
                GateJudged(
                    at=AT, task=t.id, stage=t.stage or "review", gate="review", decision=decision
                )
            )

    @rule(move=MOVES, task=st.sampled_from(TASKS))
    def operator_move(self, move, task):
        self.run.move(move, None if move in ("halt", "resume") else task)
        events, effects = self.run.last
        self.check(events, effects, hard_before=False)

    @invariant()
    def replay_reproduces_state(self):
        rows = [json.loads(json.dumps(event_to_json(e))) for e in self.run.events]
        assert fold(event_from_json(r) for r in rows) == self.run.state


CoreMachine.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestCoreMachine = CoreMachine.TestCase
