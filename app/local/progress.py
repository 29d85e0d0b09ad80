"""The live view of a local run: tasks by status, current stage, elapsed time.

It is a fold of the same event log the engine writes (never a second source of
truth): every appended batch is applied to a private `RunState`. Drawn with
`rich.live` on stderr when stderr is a terminal. With `report`, it also prints
the core's views (`app.core.run_view`, what the App posts on GitHub): a task's
view when the task fails, and the run's view when the run ends.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Sequence
from types import TracebackType
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from app.core import events as ev
from app.core.run_view import FAILED, run_view, task_view
from app.core.state import RunState, apply
from app.local.view_text import run_lines, task_lines

STYLE = {
    "landed": "green",
    "running": "cyan",
    "failed": "red",
    "infra-fault": "red",
    "blocked": "yellow",
    "deferred": "yellow",
    "pending": "dim",
}


class ProgressView:
    def __init__(
        self, *, enabled: bool, report: bool = False, console: Console | None = None
    ) -> None:
        self.enabled = enabled
        self.report = report
        self.console = console or Console(stderr=True)
        self.state = RunState()
        self.started = time.monotonic()
        self._since: dict[str, tuple[str, float]] = {}
        self._lock = threading.Lock()
        self._live: Live | None = None
        self.broken = False

    def feed(self, rows: Sequence[dict[str, Any]]) -> None:
        """Apply stored events (a whole log on resume, then each appended batch)."""
        if self.broken:
            return
        with self._lock:
            try:
                events = [ev.event_from_json(row) for row in rows]
                for e in events:
                    apply(self.state, e)
            except (KeyError, ValueError) as exc:
                # The view is a convenience: it must never stop the run it shows.
                self.broken = True
                self.console.print(f"odw run: progress view stopped: {exc!r}")
                return
            now = time.monotonic()
            for t in self.state.tasks.values():
                mark = f"{t.status}/{t.stage}"
                if t.id not in self._since or self._since[t.id][0] != mark:
                    self._since[t.id] = (mark, now)
            news = self._news(events) if self.report else []
        for line in news:
            self.console.print(line, markup=False, highlight=False, soft_wrap=True)
        if self._live is not None:
            self._live.refresh()

    def _news(self, events: Sequence[ev.Event]) -> list[str]:
        """The views these events call for: each task that failed (and still stands
        failed), then the run's if it ended."""
        lines: list[str] = []
        failed = dict.fromkeys(e.task for e in events if isinstance(e, ev.TaskFailed))
        for task in failed:
            t = self.state.task(task)
            if t.status in FAILED:
                lines += task_lines(task_view(self.state, t))
        if any(isinstance(e, ev.RunEnded) for e in events):
            lines += run_lines(run_view(self.state))
        return lines

    def counts(self) -> Counter[str]:
        with self._lock:
            return Counter(t.status for t in self.state.tasks.values())

    def render(self) -> Group:
        with self._lock:
            now = time.monotonic()
            table = Table(expand=False, box=None, pad_edge=False)
            for col in ("TASK", "STATUS", "STAGE", "FOR", "DETAIL"):
                table.add_column(col, no_wrap=col != "DETAIL", overflow="ellipsis")
            for t in self.state.tasks.values():
                stage = t.stage or "-"
                if t.live:
                    lanes = sorted(a.lane for a in t.live.values() if a.lane)
                    stage += f" ({'+'.join(lanes)})" if lanes else ""
                since = self._since.get(t.id, ("", now))[1]
                table.add_row(
                    t.id,
                    Text(t.status, style=STYLE.get(t.status, "")),
                    stage,
                    _clock(now - since) if t.status == "running" else "",
                    (t.detail or "")[:80],
                )
            counts = Counter(t.status for t in self.state.tasks.values())
            head = " ".join(f"{k}={v}" for k, v in sorted(counts.items())) or "starting"
            title = Text(
                f"odw run {self.state.run_id}  {head}  elapsed {_clock(now - self.started)}"
            )
        return Group(title, table)

    def __enter__(self) -> ProgressView:
        if self.enabled:
            self._live = Live(
                get_renderable=self.render,
                console=self.console,
                refresh_per_second=2,
                transient=False,
            )
            self._live.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


def _clock(seconds: float) -> str:
    s = int(seconds)
    if s >= 3600:
        return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{s // 60}:{s % 60:02d}"
