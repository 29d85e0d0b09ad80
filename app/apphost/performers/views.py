"""`SyncViews`: bring a run's checks, pull requests and comments up to date
(`app.apphost.sync.ViewSync`), one syncer per run at a time."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.apphost.app_effects import SyncViews, enqueue
from app.apphost.judged import judged
from app.apphost.performers.base import Busy, HostContext
from app.apphost.runs import RunKey, run_lease, run_meta
from app.apphost.step import load_state, views_key
from app.apphost.sync import ViewSync
from app.core.repo_config import valid_login
from app.store import Hold

# Who `odw app run` names when no one is given: not a person to mention.
NOT_PEOPLE = frozenset({"operator", "push", "someone"})


def mentions(meta: dict[str, Any]) -> tuple[str, ...]:
    """`odw.yml`'s `notify` list, else the person who started the run (not a bot)."""
    listed = tuple(str(n) for n in meta.get("notify") or ())
    if listed:
        return listed
    by = str(meta.get("by") or "")
    if not by or by in NOT_PEOPLE or by.endswith("[bot]") or not valid_login(by):
        return ()
    return (by,)


@dataclass
class ViewsPerformer:
    context: HostContext

    def perform(self, views: SyncViews, *, again: bool) -> Any:
        return self.sync(views.run_id, again=again)

    def gave_up(self, views: SyncViews, error: str) -> None:
        """Nothing waits on views: the next step or reconciler pass syncs them again."""

    def sync(self, run_id: str, *, again: bool = False) -> Any:
        """Sync the run's views now, unless another executor is at it.

        While another executor syncs this run, one follow-up is queued for the
        log's current version (coalesced by its key) and this entry is done:
        the follow-up starts after, so the newest state is always shown.
        """
        store = self.context.store
        try:
            with self.context.holding(
                run_lease(run_id), f"views of {run_id} are being synced"
            ) as hold:
                return self._sync(run_id, again, hold)
        except Busy:
            version = store.events.version(run_id)
            enqueue(
                store,
                f"{views_key(run_id, version)}/after-busy",
                SyncViews(run_id=run_id),
                run_id=run_id,
                not_before=store.clock() + 0.3,
            )
            return {"deferred": version}

    def _sync(self, run_id: str, again: bool, hold: Hold) -> Any:
        ctx = self.context
        state = load_state(ctx.store, run_id)
        meta = run_meta(ctx.store, run_id)
        key = RunKey.from_json(meta["key"])
        sync = ViewSync(
            ctx.store,
            ctx.client(key),
            run_id,
            str(meta.get("sha") or ""),
            ctx.config.bot_login,
            repository_url=ctx.url(key).removesuffix(".git"),
            details_url=ctx.config.details_url,
            again=again,
            mention=mentions(meta),
            hold=hold,
            judged=judged(ctx.store, run_id, until=state.version),
        )
        sync.sync(state)
        if sync.later is not None:
            # A progress edit was held: the sync that makes it, coalesced by when.
            enqueue(
                ctx.store,
                f"{run_id}/views/later/{sync.later:.2f}",
                SyncViews(run_id=run_id),
                run_id=run_id,
                not_before=sync.later,
            )
            return {"version": state.version, "held until": sync.later}
        return {"version": state.version}
