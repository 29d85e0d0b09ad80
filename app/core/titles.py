"""A stopped task's one-line title: verdict, cause and next step, each cut on its own.

`failed at gates (attempt 2 of 2): make test exit 2: FAILED tests/x.py::t; /odw
recover 1.1`. The verdict and the command are never cut (a command cut short
cannot be typed); the cause gets what is left of about 100 characters, its
gate command and its telling line (`app.core.telling`) each cut separately,
so two cuts never stack. Check runs, the status comment and the notice read it
from here. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.run_view import TaskView
from app.core.telling import telling_line
from app.core.verdict import GateResult, Verdict

TITLE_BUDGET = 100
COMMAND_PART = 32  # at most this much of a gate's command line
MIN_QUOTE = 12  # a shorter quote says nothing: left out


@dataclass(frozen=True)
class Cause:
    """What failed (`make test exit 2`) and the line that says why."""

    what: str
    quote: str = ""


def cut(text: str, limit: int) -> str:
    """One line of at most `limit` characters, an ellipsis where it was cut."""
    flat = " ".join(text.split())
    if limit <= 0:
        return ""
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def cut_middle(text: str, limit: int) -> str:
    """One line of at most `limit` characters, cut in the middle: a failure line
    says where it is first and what went wrong last (`FAILED a.py::t - assert 1 == 2`)."""
    flat = " ".join(text.split())
    if len(flat) <= limit or limit < 3:
        return cut(flat, limit)
    head = (limit - 1) * 2 // 5
    tail = limit - 1 - head
    return flat[:head].rstrip() + "…" + flat[len(flat) - tail :].lstrip()


def failed_gate(latest: Verdict | None) -> GateResult | None:
    """The first gate that failed in the task's newest verdict."""
    if latest is None:
        return None
    return next((g for g in latest.gates if g.status == "failed"), None)


def cause_of(v: TaskView, latest: Verdict | None) -> Cause:
    """A failed gate's command, exit code and telling line; else the task's detail."""
    gate = failed_gate(latest)
    if gate is not None:
        code = "no exit code" if gate.code is None else f"exit {gate.code}"
        return Cause(f"{cut(gate.command, COMMAND_PART)} {code}", telling_line(gate.tail))
    return Cause((v.detail or v.status).splitlines()[0] if (v.detail or v.status) else "")


def where(v: TaskView, latest: Verdict | None) -> str:
    """The step a person knows: `gates` when a write stage's gates failed."""
    return "gates" if failed_gate(latest) is not None else (v.stage or "-")


def attempts(v: TaskView) -> str:
    """`attempt 2 of 2`: a stopped task has no attempt left in its cycle."""
    n = next((r.attempts for r in v.stages if r.stage == v.stage), 0)
    return f"attempt {n} of {n}" if n else ""


def command(v: TaskView) -> str:
    """The move that fits the failure (the first one offered), as typed."""
    if not v.moves:
        return ""
    m = v.moves[0]
    return f"/odw {m.move} {v.id}{m.usage}"


def compose(verdict: str, cause: Cause, next_step: str, budget: int = TITLE_BUDGET) -> str:
    """`verdict: cause; next_step` in about `budget` characters, each part cut alone."""
    tail = f"; {next_step}" if next_step else ""
    room = budget - len(verdict) - len(tail) - 2
    what = cut(cause.what, max(room, MIN_QUOTE))
    room -= len(what) + 2
    quote = cut_middle(cause.quote, room) if cause.quote and room >= MIN_QUOTE else ""
    said = f"{what}: {quote}" if quote else what
    return f"{verdict}: {said}{tail}" if said else f"{verdict}{tail}"


def stopped_title(v: TaskView, latest: Verdict | None) -> str:
    """The title of a task that stopped and waits for a person."""
    count = attempts(v)
    verdict = f"{v.status} at {where(v, latest)}" + (f" ({count})" if count else "")
    return compose(verdict, cause_of(v, latest), command(v))
