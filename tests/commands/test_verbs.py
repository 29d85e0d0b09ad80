"""Each verb's row says what it does: the moves are exactly the core's, and the
rest launch runs or only read."""

from __future__ import annotations

from typing import get_args

from app.commands import verbs
from app.commands.grammar import VERBS
from app.core.inputs import MoveName


def test_the_verbs_that_move_a_run_are_exactly_the_cores_moves() -> None:
    moving = {name for name, v in VERBS.items() if v.do is verbs.move}
    # `recover ID` is the core's `recover` move into an open run (else a launch).
    assert moving | {"recover"} == set(get_args(MoveName))
    assert set(verbs.MOVES) == set(get_args(MoveName))


def test_only_configured_verbs_change_anything() -> None:
    readers = {name for name, v in VERBS.items() if v.access == "read"}
    assert all(VERBS[name].do not in (verbs.move, verbs.run, verbs.recover) for name in readers)
