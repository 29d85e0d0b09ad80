"""The decision context: what one `decide` call works on, and nothing it decides.

A private copy of the state, the input's time, the token source, and the events
and effects produced so far. `emit` applies each event to the copy as it goes, so
a multi-step reaction (a stage passes, the next is dispatched, a slot frees and
a new task starts) reads exactly the state that replaying those events rebuilds.
The policy lives in the functions that take a context, never in it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from app.core import events as ev
from app.core.effects import Effect
from app.core.state import RunState, apply

TokenSource = Callable[[], str]


@dataclass
class Context:
    s: RunState
    at: datetime
    tokens: TokenSource
    events: list[ev.Event] = field(default_factory=list)
    effects: list[Effect] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return self.s.run_id

    def emit(self, event: ev.Event) -> None:
        self.events.append(event)
        apply(self.s, event)

    def effect(self, effect: Effect) -> None:
        self.effects.append(effect)

    def token(self) -> str:
        return self.tokens()
