"""`decide(state, input, tokens) -> (events, effects)`: the only way a run changes.

The decider copies the state into a decision context, checks that the input
fits the run's phase, and hands it to the one handler registered for its type
(`handlers.HANDLERS`). Tokens come from the injected source. `run_over` is the
one rule of when a host ends a run (feeds `EndRun`).
"""

from __future__ import annotations

from app.core import events as ev
from app.core.context import Context, TokenSource
from app.core.effects import Effect
from app.core.handlers import HANDLERS
from app.core.inputs import Input, StartRun
from app.core.state import RunState

__all__ = ["CoreError", "TokenSource", "decide", "run_over"]


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


def run_over(state: RunState, *, stopped_waits: bool) -> bool:
    """Nothing runs and no task awaits an answer: the host ends the run.

    A stopped run waits for a person where one can resume it (`stopped_waits`:
    the App, through `/odw resume`); where nobody can (local mode, `simulate`),
    a stopped run with nothing left in flight is over too.
    """
    if not state.started or state.ended or (stopped_waits and state.stop is not None):
        return False
    return not state.live_attempts() and not any(t.awaiting for t in state.tasks.values())
