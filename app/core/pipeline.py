"""The per-task pipeline: stages, their capabilities, and where each leads.

plan -> design-review -> implement -> gates -> review (dual) -> integrate, with
two bounded loops (design-review back to plan, review through fix and gates)
and failure tickets that borrow a write-capable stage and come back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Capability = Literal["write", "read", "base"]
TaskStatus = Literal[
    "pending",
    "running",
    "landed",
    "failed",
    "blocked",
    "infra-fault",
    "deferred",
    "manual-merge-ready",
]
TERMINAL_FAILURES: frozenset[str] = frozenset({"failed", "infra-fault"})


@dataclass(frozen=True)
class StageSpec:
    """What a stage may touch and how many agents it runs at once."""

    name: str
    capability: Capability
    deciding: bool = False
    lanes: tuple[str, ...] = ("",)
    # Agentless stages (gates) are run by the runner itself: no marker to wait for.
    agent: bool = True

    @property
    def writes(self) -> bool:
        return self.capability == "write"


STAGES: dict[str, StageSpec] = {
    s.name: s
    for s in (
        StageSpec("plan", "write"),
        StageSpec("design-review", "read", deciding=True),
        StageSpec("implement", "write"),
        StageSpec("gates", "read", agent=False),
        # Dual review: two independent reviewers, both must approve.
        StageSpec("review", "read", deciding=True, lanes=("a", "b")),
        StageSpec("fix", "write"),
        StageSpec("integrate", "base", agent=False),
    )
}

FORWARD: dict[str, str] = {
    "plan": "design-review",
    "design-review": "implement",
    "implement": "gates",
    "gates": "review",
    "fix": "gates",
    "review": "integrate",
}
FIRST_STAGE = "plan"

# Gates whose failure only a stage that writes the task branch can change
# (seed 001: category and capability derive from the gate id alone).
TICKET_CATEGORIES: dict[str, tuple[str, Capability]] = {
    "build": ("build-broken", "write"),
    "contract": ("contract-violated", "write"),
    "static": ("static-analysis", "write"),
    "review": ("review-findings", "write"),
}
DETERMINISTIC_GATES: frozenset[str] = frozenset({"marker", "schema", "build", "contract", "static"})


def spec(stage: str) -> StageSpec:
    return STAGES[stage]


def can_fix_in_place(stage: str, gate: str) -> bool:
    """The retry-agency invariant: retry only a gate the stage can change."""
    needed = TICKET_CATEGORIES.get(gate)
    return needed is None or spec(stage).capability == needed[1]


def recovery_stage_for(capability: Capability) -> str:
    """The stage that holds a capability; writes go to fix."""
    for name in ("fix", "implement", "plan"):
        if STAGES[name].capability == capability:
            return name
    raise ValueError(f"no stage holds capability {capability!r}")
