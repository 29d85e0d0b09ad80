"""The reducer dispatches through one table: every event type, exactly one reducer."""

from __future__ import annotations

import typing

import pytest

from app.core import events as ev
from app.core import state
from app.core.state import REDUCERS

EVENT_TYPES = typing.get_args(typing.get_args(ev.Event)[0])


def test_every_event_type_has_exactly_one_reducer():
    assert sorted(t.__name__ for t in REDUCERS) == sorted(t.__name__ for t in EVENT_TYPES)
    assert len(set(REDUCERS.values())) == len(REDUCERS), "one reducer serves two event types"


@pytest.mark.parametrize("kind", EVENT_TYPES, ids=lambda t: t.__name__)
def test_each_reducer_is_typed_for_the_event_it_is_registered_for(kind):
    reducer = REDUCERS[kind]
    hints = typing.get_type_hints(reducer, vars(state))
    assert hints["e"] is kind
