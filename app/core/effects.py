"""Effects: what the core asks the adapters to do, as data with idempotency keys.

What people are told is not an effect: both hosts render it from the state
(`app.core.run_view`).

An executor may run an effect twice (a crash between doing and recording); the
key lets the adapter recognise the repeat. No effect ever deletes a branch.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Effect(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    key: str
    task: str | None = None


class DispatchStage(_Effect):
    """Run one stage attempt of a task on its branch under a fresh token."""

    kind: Literal["dispatch-stage"] = "dispatch-stage"
    task: str
    unit: Literal["normal", "addendum"] = "normal"
    stage: str
    attempt: int
    lane: str = ""
    token: str
    branch: str
    base: str
    writes: bool
    subtasks: list[str] = Field(default_factory=list)
    deadline_seconds: float
    extras: dict[str, str] = Field(default_factory=dict)
    # A retry's first attempt: keep the branch's work on this branch, then start
    # the task branch again from the base tip.
    fresh: str | None = None


class Integrate(_Effect):
    """Squash the task branch onto the base under the merge lock; tick `ticks`."""

    kind: Literal["integrate"] = "integrate"
    task: str
    branch: str
    base: str
    ticks: list[str]


class Assess(_Effect):
    kind: Literal["assess"] = "assess"
    task: str
    branch: str
    base: str
    stage: str
    detail: str


class Salvage(_Effect):
    kind: Literal["salvage"] = "salvage"
    task: str
    branch: str
    classification: str


class JudgeGate(_Effect):
    """Ask the gate judge what to do with an exhausted review gate (reset it once?)."""

    kind: Literal["judge-gate"] = "judge-gate"
    task: str
    stage: str
    gate: str
    reason: str


Effect = DispatchStage | Integrate | Assess | Salvage | JudgeGate
