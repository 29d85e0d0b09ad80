"""The decider dispatches through one table: every input type, exactly one handler."""

from __future__ import annotations

import typing

import pytest

from app.core import handlers
from app.core.handlers import HANDLERS
from app.core.inputs import Input

INPUT_TYPES = typing.get_args(Input)


def test_every_input_type_has_exactly_one_handler():
    assert sorted(t.__name__ for t in HANDLERS) == sorted(t.__name__ for t in INPUT_TYPES)
    assert len(set(HANDLERS.values())) == len(HANDLERS), "one handler serves two input types"


@pytest.mark.parametrize("kind", INPUT_TYPES, ids=lambda t: t.__name__)
def test_each_handler_is_typed_for_the_input_it_is_registered_for(kind):
    handler = HANDLERS[kind]
    hints = typing.get_type_hints(handler, vars(handlers))
    assert hints["inp"] is kind
