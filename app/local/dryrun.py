"""`odw run --local --dry-run`: what would be selected and dispatched, nothing written.

Origin is read with `git ls-remote` and through a throwaway bare repository
in a temporary directory, so PATH's refs (remote-tracking ones included), its
working tree and its git directory stay exactly as they were, and so does
origin. The real core decides on an in-memory log with `dryRun` set, so the
answer is the one a real run would start from.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from app.core.discovery import Survivor
from app.core.effects import Assess, DispatchStage, Integrate, Salvage
from app.core.inputs import StartRun
from app.core.selection import frontier
from app.engine.driver import Engine, Ports
from app.engine.memory import MemoryEventLog
from app.engine.ports import LiveAttempt, StageCompletion
from app.local.launch import Plan, Request, load_plan, pick_base
from app.local.repo import LocalRepo, OriginSnapshot, RepoError


class _NothingRuns:
    """Ports for a dry run: the core never asks them anything; if it did, that is a bug."""

    def start(self, dispatch: DispatchStage) -> None:
        raise RuntimeError("dry run: no stage is dispatched")

    def wait(self, timeout: float | None) -> list[StageCompletion]:
        return []

    def recover(self, attempts: Sequence[LiveAttempt]) -> list[StageCompletion]:
        return []

    def integrate(self, request: Integrate) -> Any:
        raise RuntimeError("dry run: nothing is integrated")

    def inspect(self, request: Integrate) -> None:
        return None

    def assess(self, request: Assess) -> Any:
        raise RuntimeError("dry run: nothing is assessed")

    def salvage(self, request: Salvage) -> Any:
        raise RuntimeError("dry run: nothing is salvaged")


def read_plan(request: Request) -> tuple[Plan, dict[str, str]]:
    repo = LocalRepo.open(request.path)
    heads = repo.origin_heads()
    with contextlib.ExitStack() as stack:
        snaps: dict[str, OriginSnapshot] = {}

        def read(branch: str, path: str) -> str | None:
            if branch not in heads:
                raise RepoError(f"origin has no branch {branch}")
            if branch not in snaps:
                snaps[branch] = stack.enter_context(OriginSnapshot.of(repo.origin_url, branch))
            return snaps[branch].show(branch, path)

        base = pick_base(request, repo.origin_default_branch(), read)
        if base not in heads:
            raise RepoError(f"origin has no branch {base}")
        return load_plan(request, base, read, heads), heads


def dry_run(request: Request) -> dict[str, Any]:
    plan, heads = read_plan(request)
    config = plan.settings.config.model_copy(update={"dry_run": True})
    idle = _NothingRuns()
    now = datetime.now(UTC)
    engine = Engine(
        Ports(
            log=MemoryEventLog(),
            stages=idle,
            integrator=idle,
            assessor=idle,
            salvager=idle,
            tokens=lambda: "dry-run-token",
            clock=lambda: now,
        )
    )
    engine.open(
        StartRun(
            at=now,
            run_id=f"dry-run-{now:%Y%m%dT%H%M%SZ}",
            base=plan.base,
            roadmap=plan.roadmap_text,
            config=config,
            held=sorted(plan.held),
            # Names only: a dry run fetches nothing into PATH, so no branch evidence.
            survivors=[
                Survivor(branch=b, head=h)
                for b, h in sorted(heads.items())
                if b.startswith("roadmap-")
            ],
        )
    )
    result = engine.run()
    f = frontier(plan.roadmap, held=plan.held)
    result["held"] = [{"id": k, "reason": v} for k, v in plan.held.items()]
    result["frontier"] = {
        "ready": [c.id for c in f.ready],
        "dispatch": [
            {"task": c.id, "stage": "plan", "branch": c.branch, "agent": plan.settings.agent}
            for c in f.ready[: config.max_parallel]
        ],
        "blocked": [{"id": b.id, "missing": list(b.missing)} for b in f.blocked],
        "gates": list(plan.settings.gates),
    }
    return result
