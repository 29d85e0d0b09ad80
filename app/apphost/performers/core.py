"""The core's effects (dispatch, integrate, assess, salvage, judge), performed by
`app.engine.perform.perform` exactly as local mode performs them.

The result's input is decided at once (`api.submit`). Each port is built
only when the effect uses it (`AppPorts`). An entry claimed a second time
repeats nothing visible: a dispatch is looked for by its tag before it is sent
again, an integration reads the base before it runs again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from app.apphost import api
from app.apphost.adapters import (
    ActionsStages,
    AppPorts,
    MirrorIntegrator,
    evidence_ports,
)
from app.apphost.dispatched import AmbiguousRun
from app.apphost.performers.base import HostContext
from app.apphost.pr_landing import RunLanding
from app.apphost.runs import RunKey, run_meta
from app.apphost.step import load_state
from app.apphost.sync import base_head
from app.apphost.unpacked import Unpacked, unpack_judged
from app.core.effects import DispatchStage, Effect
from app.core.identity import Identity
from app.core.inputs import IntegrationFinished
from app.core.state import RunState
from app.engine.perform import gave_up, perform
from app.metrics import INTEGRATION_ATTEMPTS, LANDINGS

log = logging.getLogger("odw.apphost")


class CoreEntry(BaseModel):
    """An outbox row of a core effect, as `step.decide_step` writes it."""

    run_id: str
    effect: Effect


@dataclass
class CorePerformer:
    context: HostContext

    def perform(self, entry: CoreEntry, *, again: bool) -> Any:
        run_id, effect = entry.run_id, entry.effect
        state = load_state(self.context.store, run_id)
        if state.ended:
            return {"skipped": "the run has ended"}
        ports = self.ports(run_id, state, run_meta(self.context.store, run_id), again=again)
        if isinstance(effect, DispatchStage):
            handles = self.context.store.projections.tasks(run_id).get(effect.task or "", {})
            ports.stages.branch_ready = bool(handles.get("branch"))
        try:
            result = perform(effect, ports, again=again)
        except AmbiguousRun as exc:
            # Two runs could be this dispatch's: an infrastructure fault, never a guess.
            log.warning("run %s: %s", run_id, exc)
            self.gave_up(entry, str(exc))
            return {"ambiguous": str(exc)}
        done: dict[str, Any] = {}
        if isinstance(effect, DispatchStage):
            sent = ports.stages.dispatched.get(effect.key)
            if sent is not None:
                done = {
                    "workflowRun": sent.run_id,
                    "url": sent.html_url,
                    "foundBy": sent.found_by,
                    "token": effect.token,
                    "task": effect.task,
                    "stage": effect.stage,
                    "dispatchedAt": self.context.store.clock(),
                    "deadline": effect.deadline_seconds,
                }
                self._note(run_id, effect.task, jobUrl=sent.html_url, branch=True)
        if isinstance(result, IntegrationFinished):
            count_landing(result)
        if result is not None:
            api.submit(self.context.store, run_id, result)
        return done

    def gave_up(self, entry: CoreEntry, error: str) -> None:
        """The core hears that its effect will never be done, so the run moves on."""
        answer = gave_up(entry.effect, error, self.context.clock())
        if answer is not None:
            api.submit(self.context.store, entry.run_id, answer)

    def ports(self, run_id: str, state: RunState, meta: dict[str, Any], again: bool) -> AppPorts:
        """The ports of one effect of the run, each built when first used."""
        ctx = self.context
        key = RunKey.from_json(meta["key"])
        identity = identity_of(meta)
        assert state.roadmap is not None
        roadmap = state.roadmap

        def stages() -> ActionsStages:
            # The base as the run knows it: a task branches off the newest squash
            # the run landed, without reading the base again.
            base = base_head(state, str(meta.get("sha") or "")) if meta.get("sha") else ""
            return ActionsStages(
                ctx.client(key), run_id, base, again=again,
                tag_key=ctx.tag_key, bot=ctx.config.bot_login, clone=lambda: ctx.clone(key),
            )  # fmt: skip

        def integrator() -> MirrorIntegrator:
            client = ctx.client(key)
            # An installation that cannot give a push token fails this entry, to
            # be retried and given up on as any host failure; a crash inside the
            # landing itself is the integrator's own fault (`guarded`).
            client.git_token(write=True)
            return MirrorIntegrator(
                client,
                ctx.url(key),
                run_id,
                roadmap,
                ctx.config.data_dir,
                ctx.lock,
                identity,
                bool(meta.get("deleteTaskBranches", True)),
                method=str(meta.get("integration") or "push"),
                landing=RunLanding(ctx.store, run_id),
            )

        def evidence() -> tuple[Unpacked, Unpacked]:
            assessor, salvager = evidence_ports(ctx.clone(key), ctx.run_dir(run_id), identity)
            ported = Unpacked(
                assessor, salvager, lambda task: unpack_judged(ctx, ctx.client(key), run_id, task)
            )
            return ported, ported

        return AppPorts(stages, integrator, evidence, clock=ctx.clock)

    def _note(self, run_id: str, task: str, **values: Any) -> None:
        """Remember what the views need about a task (its last Actions run, its branch)."""
        self.context.store.projections.merge_task(run_id, task, values)


def count_landing(finished: IntegrationFinished) -> None:
    report = finished.report
    outcome = "fault" if report is None else "landed" if report.ok else "failed"
    LANDINGS.labels(outcome=outcome).inc()
    if report is not None:
        INTEGRATION_ATTEMPTS.observe(report.attempts)


def identity_of(meta: dict[str, Any]) -> Identity | None:
    """The commit identity a run was started with (`.github/odw.yml` `identity`)."""
    data = meta.get("identity")
    return Identity.model_validate(data) if data else None
