"""The core's run and task views (`app.core.run_view`) as terminal lines.

The same views the App posts as check runs, printed for `odw run --local`.
Text from outside ODW goes through `sanitize` (no terminal escapes, nothing
invisible) and is kept to one line per field.
"""

from __future__ import annotations

from app.core.run_view import RunView, TaskView
from app.core.sanitize import sanitize

DETAIL_LIMIT = 500


def plain(text: str | None, limit: int = DETAIL_LIMIT) -> str:
    """Untrusted text as one terminal line."""
    flat = " ".join(sanitize(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def task_lines(v: TaskView) -> list[str]:
    """A task's view: where it stands, its last attempt, and what failed."""
    lines = [f"task {plain(v.id, 60)} {plain(v.title, 120)}: {plain(v.head)}"]
    if v.last is not None:
        last = v.last
        said = "passed" if last.ok else "failed"
        line = f"  last attempt: {last.name} #{last.attempt} {said}"
        line += f" ({last.outcome})" if last.outcome != said else ""
        line += f": {plain(last.detail)}" if last.detail and last.detail != v.detail else ""
        lines.append(line)
    if v.failure:
        lines.append(f"  {plain(v.failure)}")
    return lines


def run_lines(v: RunView) -> list[str]:
    """A run's view: its one-line title, why it halted, faults, remediation, moves."""
    lines = [f"run {plain(v.run_id, 100)} on {plain(v.base, 100)}: {plain(v.title)}"]
    if v.halted:
        lines.append(f"  halted: {plain(v.halted)}")
    lines.append("  faults: " + ", ".join(f"{k} {n}" for k, n in v.fault_metrics))
    if v.remediation:
        lines.append(f"  {plain(v.remediation)}")
    for m in v.moves:
        lines.append(
            f"  move: {plain(m.what)} by {plain(m.by, 100)}"
            + (f" ({plain(m.refused)})" if m.refused else "")
        )
    return lines
