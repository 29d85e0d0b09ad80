"""One input into one run: decide, append, hand over the effects. The step every host takes.

Local mode's `Engine` takes it with its log and performs each effect at once;
the App takes it on the store's log inside a transaction and puts each effect
in the outbox. The events are appended at the version read before any effect
is handed over, so a crash leaves a log that says what was asked. Whether the
run is over is the core's rule (`run_over`); a host that ends its runs in the
step (the App) says how a stopped run counts, local mode's loop asks the same
rule once its own queue is drained.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from app.core import events as ev
from app.core.decide import TokenSource, decide, run_over
from app.core.effects import Effect
from app.core.inputs import EndRun, Input
from app.core.state import RunState, apply


class Appender(Protocol):
    """Where the step appends: an `EventLog`, or the store's log bound to one run."""

    def append(self, events: Sequence[dict[str, Any]], expected_version: int) -> int: ...


@dataclass(frozen=True)
class Advanced:
    """What one step recorded: the stored events and the effects handed over."""

    rows: list[dict[str, Any]]
    effects: list[Effect]


def advance(
    state: RunState,
    inp: Input,
    tokens: TokenSource,
    log: Appender,
    effects: Callable[[Effect], None],
    *,
    stopped_waits: bool | None = None,
) -> Advanced:
    """Decide `inp` on `state`, append the events at the version read, hand each effect over.

    `state` is advanced in place. With `stopped_waits` set, a run the core then
    finds over (`run_over(state, stopped_waits=...)`) is ended in the same step;
    None leaves the end to the host's loop. Raises `CoreError` for an input the
    run cannot take (nothing changed) and `ConcurrencyError` when the log moved
    on (`state` is then ahead of the log and must be read again).
    """
    read = state.version
    events, out = decide(state, inp, tokens)
    for e in events:
        apply(state, e)
    if stopped_waits is not None and run_over(state, stopped_waits=stopped_waits):
        more, extra = decide(state, EndRun(at=inp.at), tokens)
        for e in more:
            apply(state, e)
        events, out = [*events, *more], [*out, *extra]
    rows = [ev.event_to_json(e) for e in events]
    if rows:
        log.append(rows, read)
    for effect in out:
        effects(effect)
    return Advanced(rows, out)
