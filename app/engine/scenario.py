"""Rehearsal scenarios: a roadmap, a config, scripted outcomes and operator moves.

Everything is validated before anything runs; an error names the field
(`scenario.outcomes.1.1.2.implement[0]`), so a maintainer can fix it in one go.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from app.core.assessment import Classification
from app.core.config import DISPATCHED_STAGES, RunConfig, first_error
from app.core.discovery import Survivor
from app.core.inputs import MoveName, StartRun
from app.core.roadmap import Roadmap
from app.core.roadmap_parse import parse_roadmap
from app.core.state import RunState, units_of
from app.engine.driver import Engine, Ports, ScheduledMove
from app.engine.memory import MemoryEventLog
from app.engine.scripted import (
    OUTCOME,
    Counter,
    ScriptedAssessor,
    ScriptedIntegrator,
    ScriptedSalvager,
    ScriptedStages,
)

OUTCOME_STAGES = (*DISPATCHED_STAGES, "integrate")
INTEGRATE_WORDS = frozenset({"pass", "conflict", "crash"})
TASK_MOVES = frozenset({"retry", "rearm", "complete", "force-start"})


class ScenarioError(ValueError):
    """A scenario that cannot be rehearsed; the message names the field."""


class Command(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    after: int = Field(ge=0)
    move: MoveName
    task: str | None = None
    by: str = "operator"
    reason: str = ""
    overrides: dict[str, Any] = Field(default_factory=dict)


class Scenario(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    roadmap: str
    config: RunConfig = Field(default_factory=RunConfig)
    outcomes: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    commands: list[Command] = Field(default_factory=list)
    assessments: dict[str, Classification] = Field(default_factory=dict)
    survivors: list[Survivor] = Field(default_factory=list)
    base: str = "main"
    run_id: str = Field(default="simulation", alias="runId")

    @field_validator("outcomes")
    @classmethod
    def _words(cls, value: dict[str, dict[str, list[str]]]) -> dict[str, dict[str, list[str]]]:
        for task, stages in value.items():
            for stage, words in stages.items():
                if stage not in OUTCOME_STAGES:
                    raise ValueError(
                        f"{task}.{stage}: unknown stage; stages are " + ", ".join(OUTCOME_STAGES)
                    )
                for i, word in enumerate(words):
                    ok = (
                        word in INTEGRATE_WORDS
                        if stage == "integrate"
                        else bool(OUTCOME.match(word))
                    )
                    if (
                        ok
                        and word.startswith("changes:")
                        and stage not in ("design-review", "review")
                    ):
                        ok = False
                    if not ok:
                        raise ValueError(
                            f"{task}.{stage}[{i}]: unknown outcome {word!r} for {stage}"
                        )
        return value


def load_scenario(text: str) -> tuple[Scenario, Roadmap]:
    """Parse and check a scenario, or raise ScenarioError naming the field."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"scenario: not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise ScenarioError("scenario: must be a JSON object")
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(first_error(exc, "scenario")) from None
    roadmap = parse_roadmap(scenario.roadmap)
    if roadmap.errors:
        raise ScenarioError(f"scenario.roadmap: {roadmap.errors[0].message}")
    open_ids = _unit_ids(scenario)
    for task in scenario.outcomes:
        if task not in open_ids:
            raise ScenarioError(f"scenario.outcomes.{task}: no open task {task} in the roadmap")
    for i, c in enumerate(scenario.commands):
        if c.move in TASK_MOVES and c.task is None:
            raise ScenarioError(f"scenario.commands[{i}].task: {c.move} needs a task id")
        if c.task is not None and c.task not in open_ids:
            raise ScenarioError(
                f"scenario.commands[{i}].task: no open task {c.task} in the roadmap"
            )
    seen: set[str] = set()
    for i, v in enumerate(scenario.survivors):
        if v.branch in seen:
            raise ScenarioError(f"scenario.survivors[{i}].branch: {v.branch} is listed twice")
        seen.add(v.branch)
    return scenario, roadmap


def _unit_ids(scenario: Scenario) -> set[str]:
    return set(units_of(parse_roadmap(scenario.roadmap)))


def simulate(scenario: Scenario) -> tuple[dict[str, Any], list[dict[str, Any]], RunState]:
    """Run the real core through scripted ports; return result, events and state."""
    counter = Counter()
    log = MemoryEventLog()
    ports = Ports(
        log=log,
        stages=ScriptedStages(scenario.outcomes),
        integrator=ScriptedIntegrator(scenario.outcomes),
        assessor=ScriptedAssessor(dict(scenario.assessments)),
        salvager=ScriptedSalvager(),
        tokens=counter.token,
        clock=counter.now,
    )
    engine = Engine(ports)
    engine.open(
        StartRun(
            at=counter.now(),
            run_id=scenario.run_id,
            base=scenario.base,
            roadmap=scenario.roadmap,
            config=scenario.config,
            survivors=list(scenario.survivors),
        )
    )
    moves = [
        ScheduledMove(
            after=c.after, move=c.move, task=c.task, by=c.by, reason=c.reason, overrides=c.overrides
        )
        for c in scenario.commands
    ]
    result = engine.run(moves)
    return result, log.load(), engine.state
