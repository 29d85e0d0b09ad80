"""What the run knows about fresh-launch recovery: the fold of the recovery events.

Each function folds one recovery event into the `Recovery` slice only; what
the event means for a task (awaiting an assessment, running again) is the task
reducer's business (`state.REDUCERS` calls both).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core import events as ev
from app.core.assessment import Assessment
from app.core.discovery import Survivor


@dataclass
class Decision:
    branch: str
    classification: str
    action: str
    reason: str = ""
    stage: str | None = None


@dataclass
class Recovery:
    survivors: dict[str, Survivor] = field(default_factory=dict)  # by branch
    planned: bool = False
    enabled: bool = False
    mode: str = "assess"
    blocked: str | None = None
    candidates: list[dict[str, str]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    # A surviving branch holds its task out of selection for the whole run.
    held: dict[str, str] = field(default_factory=dict)  # id -> surviving branch
    assessments: dict[str, Assessment] = field(default_factory=dict)
    decisions: dict[str, Decision] = field(default_factory=dict)
    queue: list[str] = field(default_factory=list)  # decided to resume, not started yet
    resumed: list[str] = field(default_factory=list)
    unresolved: list[dict[str, Any]] = field(default_factory=list)
    halt: str | None = None


def planned(r: Recovery, e: ev.RecoveryPlanned) -> None:
    r.planned, r.enabled, r.mode, r.blocked = True, e.enabled, e.mode, e.blocked
    r.candidates, r.skipped = list(e.candidates), list(e.skipped)
    branches = {c["id"]: c["branch"] for c in [*e.candidates, *e.skipped] if "id" in c}
    r.held = {i: branches.get(i, "") for i in e.held}


def assessed(r: Recovery, e: ev.RecoveryAssessed) -> None:
    r.assessments[e.task] = e.assessment


def decided(r: Recovery, e: ev.RecoveryDecided) -> None:
    r.decisions[e.task] = Decision(e.branch, e.classification, e.action, e.reason, e.stage)
    if e.action == "resume":
        r.queue.append(e.task)


def resumed(r: Recovery, e: ev.RecoveryResumed) -> None:
    r.queue = [i for i in r.queue if i != e.task]
    r.resumed.append(e.task)


def unresolved(r: Recovery, e: ev.RecoveryUnresolved) -> None:
    r.unresolved, r.halt = list(e.unresolved), e.reason
