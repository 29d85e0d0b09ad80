"""Which performer does which outbox kind: the one table, checked complete by
`tests/apphost/test_performers.py`.

Each row names the model its rows are read as and how its performer is built;
the executor builds a kind's performer when it first meets that kind.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, get_args

from pydantic import BaseModel

from app.apphost.app_effects import (
    INGEST,
    START,
    TICK,
    VIEWS,
    IngestRequested,
    StartRequested,
    SyncViews,
    TickRequested,
)
from app.apphost.performers.base import HostContext, Performer
from app.apphost.performers.command import CommandPerformer
from app.apphost.performers.core import CoreEntry, CorePerformer
from app.apphost.performers.ingest import IngestPerformer
from app.apphost.performers.start import StartPerformer
from app.apphost.performers.tick import TickPerformer
from app.apphost.performers.views import ViewsPerformer
from app.commands.received import COMMAND, CommandReceived
from app.core.effects import Effect

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Row(Generic[M]):
    model: type[M]
    build: Callable[[HostContext], Performer[M]]


# Every kind of the core's `Effect` union, read as `CoreEntry` (what `step` writes).
CORE_KINDS: frozenset[str] = frozenset(t.model_fields["kind"].default for t in get_args(Effect))

PERFORMERS: dict[str, Row[Any]] = {
    START: Row(StartRequested, StartPerformer),
    INGEST: Row(IngestRequested, IngestPerformer),
    TICK: Row(TickRequested, TickPerformer),
    VIEWS: Row(SyncViews, ViewsPerformer),
    COMMAND: Row(CommandReceived, CommandPerformer),
    **{kind: Row(CoreEntry, CorePerformer) for kind in CORE_KINDS},
}
