"""`TickRequested`: tick the roadmap box of a task a person merged, on the base
(the integrator's merge lock and mirror, `app.gitops.tick.tick_on_base`).

A base that refuses pushes is noted (`RunLanding`) and logged; later runs count
the task done from the recorded merge anyway. Any other failure is retried.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from app.apphost.app_effects import TickRequested
from app.apphost.performers.base import HostContext
from app.apphost.performers.core import identity_of
from app.apphost.pr_landing import RunLanding
from app.apphost.runs import RunKey, run_meta
from app.core.identity import INTEGRATOR_IDENTITY
from app.core.naming import ROADMAP_PATH, task_branch
from app.gitops.integrate import PROTECTED_BASE
from app.gitops.tick import tick_on_base

log = logging.getLogger("odw.apphost")


@dataclass
class TickPerformer:
    context: HostContext

    def perform(self, t: TickRequested, *, again: bool) -> Any:
        ctx = self.context
        meta = run_meta(ctx.store, t.run_id)
        key = RunKey.from_json(meta["key"])
        landing = RunLanding(ctx.store, t.run_id)
        if meta.get("integration") == "pull-request" or landing.protected():
            return _untickable(t, key, "the base takes changes only through PRs")
        report = tick_on_base(
            ctx.url(key),
            key.base,
            task_branch(t.task),
            t.task,
            note=f"Pull request #{t.number} was merged by {t.by}"
            + (f" as {t.sha}." if t.sha else "."),
            run_id=t.run_id,
            lock=ctx.lock,
            data_dir=ctx.config.data_dir,
            roadmap_path=ROADMAP_PATH,
            token=ctx.client(key).git_token(write=True),
            identity=identity_of(meta) or INTEGRATOR_IDENTITY,
        )
        if report.ticked:
            log.info("run %s: %s", t.run_id, report.summary)
            return {"ticked": True, "sha": report.sha, "summary": report.summary}
        if PROTECTED_BASE in report.summary:
            landing.mark_protected(key.base)
            return _untickable(t, key, report.summary)
        raise RuntimeError(report.summary)  # retried with backoff

    def gave_up(self, t: TickRequested, error: str) -> None:
        """The merge is recorded already: later runs count the task done without the box."""


def _untickable(t: TickRequested, key: RunKey, why: str) -> Any:
    log.warning(
        "run %s: %s merged by a person but its box cannot be ticked on %s (%s); "
        "later runs count it done from the merge",
        t.run_id, t.task, key.base, why,
    )  # fmt: skip
    return {"ticked": False, "why": why}
