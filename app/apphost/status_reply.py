"""What `/odw status` answers: where the run is, which task stopped and what to type.

Rendered from the same views as the run check (`app.core.run_view`), so the
reply and the run's front page never disagree. Pure: state in, text out.
"""

from __future__ import annotations

from collections import Counter

from app.apphost.views import cell, next_moves, untrusted
from app.core.run_view import STOPPED, run_view, task_view
from app.core.state import RunState


def run_status(s: RunState, base: str) -> str:
    """The run in one line, then each stopped task's head and its commands."""
    v = run_view(s)
    counts = Counter(r.status for r in v.rows)
    parts = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
    halted = f"; **halted**: {cell(v.halted, 300)}" if v.halted and not s.ended else ""
    where = f"run `{untrusted(v.run_id, 100)}` on `{untrusted(base, 100)}`"
    lines = [f"{where}: {parts or 'no tasks'}{halted}"]
    if v.resume:
        lines.append("- to go on: `/odw resume`")
    for r in v.rows:
        if r.status not in STOPPED and r.status != "blocked":
            continue
        line = f"- **{cell(r.id)}** {cell(r.why)}"
        moves = [f"`/odw {m.move} {untrusted(r.id, 60)}{m.usage}`" for m in r.moves]
        lines.append(line + (f"; type {' or '.join(moves)}" if moves else ""))
    return "\n".join(lines)


def task_status(s: RunState, task_id: str) -> str:
    """One task: its status and stage, why it stopped or waits, and its commands."""
    t = s.tasks[task_id]
    v = task_view(s, t)
    tries = t.attempts.get(t.stage or "", 0)
    text = f"task {cell(task_id)} is **{cell(t.status)}**" + (
        f" at {cell(t.stage)} (attempt {tries})" if t.stage else ""
    )
    if t.detail:
        text += f": {cell(t.detail, 300)}"  # gate or agent output
    moves = next_moves(v)
    if moves:
        text += "\n\n**Next:**\n" + "\n".join(f"- {m}" for m in moves)
    return text
