"""Runs that GitHub itself stops: the repository moved, or the App's installation
was removed or suspended.

Nothing ODW retries can undo these, so the run is halted at once with the
reason (`halted by GitHub: ...`), shown on its checks and in `odw app status`,
and nothing more is dispatched; a person starts or resumes it once the cause
is gone. A halt is the operators' own stop, so `/odw resume` lifts it.
"""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import Connection

from app.apphost.runs import OPEN, RunKey, run_meta
from app.apphost.step import decide_step, load_state
from app.core.inputs import OperatorMove
from app.store import Store

BY = "GitHub"


def _halt(
    store: Store,
    run_id: str,
    reason: str,
    meta: dict[str, object] | None = None,
    tx: Connection | None = None,
) -> bool:
    """Halt `run_id` with `reason` unless it has ended or is stopped already."""
    from app.apphost.api import now, tokens  # api imports the runs this module halts

    state = load_state(store, run_id, tx=tx)
    if state.ended or (state.stop is not None and state.stop.hard):
        return False
    move = OperatorMove(at=now(), move="halt", by=BY, reason=reason)
    decide_step(store, run_id, move, tokens, meta=meta, tx=tx)
    return True


def repository_moved(store: Store, run_id: str, moved_to: str | None, detail: str) -> bool:
    """Halt a run whose repository was renamed or transferred; its key follows the
    repository, so its checks are written, and a resume works, at the new name."""
    meta = run_meta(store, run_id)
    if "key" not in meta:
        return False
    key = RunKey.from_json(meta["key"])
    where = f"the repository moved to {moved_to}" if moved_to else "the repository moved"
    reason = (
        f"{where} ({key.repository} is its old name; {detail}); start the run again "
        f"there (`/odw run`), or `/odw resume` this one"
    )
    new_meta: dict[str, object] | None = None
    if moved_to and moved_to != key.repository:
        new_meta = {"key": replace(key, repository=moved_to).to_json(), "movedFrom": key.repository}
    return _halt(store, run_id, reason, new_meta)


UNINSTALLED = (
    "the App was uninstalled from {account} on GitHub, so ODW can do nothing more for "
    "this run: install the App again, then start a new run (`/odw run`)"
)
SUSPENDED = (
    "the App's installation on {account} was suspended on GitHub, so ODW can do nothing "
    "for this run: unsuspend it (the account's Settings → Applications → Installed "
    "GitHub Apps), then `/odw resume`"
)


def installation_gone(
    store: Store, installation: int, why: str, *, tx: Connection | None = None
) -> list[str]:
    """Halt every open run of `installation` (uninstalled or suspended: `UNINSTALLED`,
    `SUSPENDED`, or GitHub's own words when no webhook said which); their ids."""
    halted = []
    for view in store.projections.runs(status=OPEN):
        key = view.data.get("key")
        if not isinstance(key, dict) or int(key.get("installation", 0)) != installation:
            continue
        if _halt(store, view.run_id, why, tx=tx):
            halted.append(view.run_id)
    return halted
