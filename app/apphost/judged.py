"""What a run's judged attempts said, read from its event log.

Views need each task's newest verdict and the time its stages took. Both come
from the `attempt-judged` events (each carries the verdict it judged), not from
the verdict files ingest unpacked under one process's data directory: with
several processes, the one syncing a run's views is often not the one that
unpacked its artifacts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from app.core import events as ev
from app.core.verdict import Verdict
from app.store import Store


@dataclass
class Judged:
    """Per task: its newest verdict and the seconds each stage (or review lane) took."""

    latest: dict[str, Verdict] = field(default_factory=dict)
    times: dict[str, dict[str, float]] = field(default_factory=dict)

    def add(self, e: ev.AttemptJudged) -> None:
        v = e.verdict
        if v is None:
            return
        self.latest[e.task] = v
        name = f"{e.stage}/{e.lane}" if e.lane else e.stage
        spent = v.timings.get("total", sum(v.timings.values()))
        times = self.times.setdefault(e.task, {})
        times[name] = times.get(name, 0.0) + spent


def attempts_judged(
    store: Store, run_id: str, *, until: int | None = None
) -> Iterator[ev.AttemptJudged]:
    """The run's `attempt-judged` events up to version `until`, oldest first."""
    for row in store.events.load(run_id, until=until, types=("attempt-judged",)):
        event = ev.event_from_json(row)
        if isinstance(event, ev.AttemptJudged):
            yield event


def judged(store: Store, run_id: str, *, until: int | None = None) -> Judged:
    """Fold the run's judged attempts up to version `until` (the version of the
    state the views are drawn from)."""
    found = Judged()
    for event in attempts_judged(store, run_id, until=until):
        found.add(event)
    return found
