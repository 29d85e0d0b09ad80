"""A run's state as JSON and back: what a host keeps so that an input need not fold the whole log.

Everything but the parsed roadmap, which never changes in a run and is rebuilt
from its start (`state.started_roadmap`), so a snapshot costs the size of the state,
not of the roadmap's text. A snapshot is a cache of the fold, never a source:
the full fold stays the check (the tests fold from zero and compare), and a
snapshot that does not read back is not used.
"""

from __future__ import annotations

from pydantic import TypeAdapter, ValidationError

from app.core.roadmap import Roadmap
from app.core.state import RunState

_STATE: TypeAdapter[RunState] = TypeAdapter(RunState)


class SnapshotError(ValueError):
    """A snapshot that does not read back as a run state (another format, damaged)."""


def dump_state(state: RunState) -> bytes:
    """The state without its roadmap, as JSON (field order kept: task order matters)."""
    return _STATE.dump_json(state, exclude={"roadmap"}, by_alias=True)


def load_state(data: bytes | str, roadmap: Roadmap) -> RunState:
    """The state `dump_state` wrote, with the run's `roadmap` put back."""
    try:
        state = _STATE.validate_json(data)
    except ValidationError as exc:
        raise SnapshotError(f"not a run state snapshot: {exc.error_count()} errors") from None
    state.roadmap = roadmap
    return state
