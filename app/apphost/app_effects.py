"""The App's own effects, typed as the core's are: one outbox kind each.

Webhook handlers and operators record them (store-only: `api.py`,
`app/service/handlers`); the executor reads each row back as its kind's model
and hands it to that kind's performer (`performers/table.py`). A row's payload
is the model without its `kind` (the row's own column). Rows written before
the payloads were typed (camelCase names, a command's whole webhook) still
read: the old names are accepted aliases.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator
from sqlalchemy import Connection

from app.apphost.runs import RunKey
from app.commands.host import Launch
from app.commands.received import CommandReceived
from app.store import Store

START: Final = "app-start"
INGEST: Final = "app-ingest"
TICK: Final = "app-tick"
VIEWS: Final = "app-views"  # also written by `step.decide_step`, with the same payload

# A launch's options as rows from before typed payloads carried them.
_LEGACY_LAUNCH = {
    "dryRun": "dry_run",
    "maxParallel": "max_parallel",
    "resumeMode": "resume_mode",
    "resumeTaskId": "resume_task",
}


class _AppEffect(BaseModel):
    model_config = ConfigDict(frozen=True)


class StartRequested(_AppEffect):
    """Start or continue a run of `key` (a push, a command, an operator)."""

    kind: Literal["app-start"] = START
    key: RunKey
    by: str | None = None
    sha: str | None = None  # the base's SHA to read; else its head when performed
    # A push: start only when `.github/odw.yml` says `auto`, and only when the
    # roadmap differs from `before`'s.
    only_if_auto: bool = Field(False, validation_alias=AliasChoices("only_if_auto", "onlyIfAuto"))
    before: str | None = None
    launch: Launch | None = Field(None, validation_alias=AliasChoices("launch", "options"))

    @field_validator("launch", mode="before")
    @classmethod
    def _legacy_options(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {_LEGACY_LAUNCH.get(k, k): v for k, v in value.items()}
        return value


class IngestRequested(_AppEffect):
    """Read a completed workflow run and feed it to the attempt that recorded it."""

    kind: Literal["app-ingest"] = INGEST
    installation: int
    repository: str
    workflow_run: int = Field(validation_alias=AliasChoices("workflow_run", "workflowRun"))
    # The completed run as the signed `workflow_run` delivery (or the
    # reconciler's read) described it, so the executor does not read it again.
    # A completed attempt does not change: a re-run is a new attempt, a new entry.
    run: dict[str, Any] | None = None


class TickRequested(_AppEffect):
    """Tick the roadmap box of a task a person merged, on the base."""

    kind: Literal["app-tick"] = TICK
    run_id: str
    task: str
    number: int
    sha: str | None = None
    by: str


class SyncViews(_AppEffect):
    """Bring a run's checks, pull requests and comments up to date."""

    kind: Literal["app-views"] = VIEWS
    run_id: str


AppEffect = Annotated[
    StartRequested | IngestRequested | TickRequested | SyncViews | CommandReceived,
    Field(discriminator="kind"),
]


def enqueue(
    store: Store,
    key: str,
    effect: AppEffect,
    *,
    run_id: str | None = None,
    not_before: float | None = None,
    tx: Connection | None = None,
) -> bool:
    """Record `effect` under `key`; False (and nothing changes) when the key exists."""
    payload = effect.model_dump(mode="json", exclude={"kind"})
    return store.outbox.enqueue(
        key, effect.kind, payload, run_id=run_id, not_before=not_before, tx=tx
    )
