"""`decide(state, input, tokens) -> (events, effects)`: the only way a run changes.

The decider copies the state into a decision context, checks that the input
fits the run's phase, and hands it to the one handler registered for its type
(`handlers.HANDLERS`). Tokens come from the injected source.
"""

from __future__ import annotations

from app.core import events as ev
from app.core.context import Context, TokenSource
from app.core.effects import Effect
from app.core.handlers import HANDLERS
from app.core.inputs import Input, StartRun
from app.core.state import RunState

__all__ = ["CoreError", "TokenSource", "decide"]


class CoreError(ValueError):
    """An input the core cannot accept in this state (a caller bug, not a run event)."""


def decide(state: RunState, inp: Input, tokens: TokenSource) -> tuple[list[ev.Event], list[Effect]]:
    if isinstance(inp, StartRun):
        if state.started:
            raise CoreError("the run has already started")
    elif not state.started:
        raise CoreError(f"{inp.kind} before the run started")
    elif state.ended:
        raise CoreError(f"{inp.kind} after the run ended")
    c = Context(state.clone(), inp.at, tokens)
    HANDLERS[type(inp)](c, inp)
    return c.events, c.effects
