"""Keep the installations and repositories tables current; an uninstalled or
suspended installation halts its open runs with that reason (`apphost.stops`)."""

from __future__ import annotations

from app.apphost import stops
from app.service.handlers.activity import record
from app.service.outcome import HandlerContext
from webhooks.payloads import Installation, InstallationEvent, InstallationRepositoriesEvent
from webhooks.router import Router

router = Router()


def _upsert(inst: Installation, ctx: HandlerContext) -> None:
    ctx.store.installations.upsert(
        inst.id,
        tx=ctx.tx,
        account_login=inst.account.login if inst.account else None,
        account_type=inst.account.type if inst.account else None,
        target_type=inst.target_type,
        repository_selection=inst.repository_selection,
        permissions=dict(inst.permissions),
        events=list(inst.events),
    )


@router.register("installation")
def installation(event: InstallationEvent, ctx: HandlerContext) -> None:
    inst, store, tx = event.installation, ctx.store, ctx.tx
    account = inst.account.login if inst.account else f"installation {inst.id}"
    if event.action == "deleted":
        store.installations.mark_deleted(inst.id, tx=tx)
        stops.installation_gone(store, inst.id, stops.UNINSTALLED.format(account=account), tx=tx)
    else:
        _upsert(inst, ctx)
        if event.action == "suspend":
            store.installations.set_suspended(inst.id, True, tx=tx)
            why = stops.SUSPENDED.format(account=account)
            stops.installation_gone(store, inst.id, why, tx=tx)
        elif event.action == "unsuspend":
            store.installations.set_suspended(inst.id, False, tx=tx)
        if event.action == "created" and event.repositories:
            store.installations.add_repositories(
                inst.id, (r.model_dump() for r in event.repositories), tx=tx
            )
    record(event, ctx)


@router.register("installation_repositories")
def installation_repositories(event: InstallationRepositoriesEvent, ctx: HandlerContext) -> None:
    inst, store, tx = event.installation, ctx.store, ctx.tx
    _upsert(inst, ctx)
    if event.repository_selection:
        store.installations.upsert(inst.id, tx=tx, repository_selection=event.repository_selection)
    store.installations.add_repositories(
        inst.id, (r.model_dump() for r in event.repositories_added), tx=tx
    )
    store.installations.remove_repositories(
        inst.id, (r.id for r in event.repositories_removed), tx=tx
    )
    record(event, ctx)
