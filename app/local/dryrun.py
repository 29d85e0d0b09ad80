"""`odw run --local --dry-run`: what would be selected and dispatched, nothing written.

Origin is read with `git ls-remote` and through a throwaway bare repository
in a temporary directory, so PATH's refs (remote-tracking ones included), its
working tree and its git directory stay exactly as they were, and so does
origin. The real core decides on an in-memory log with `dryRun` set, so the
answer is the one a real run would start from. Surviving branches are handed
over with host evidence collected in that throwaway repository: the core may
classify them and report what recovery would do, but a dry run never resumes.
A live run of the same base (its lease) is reported as such: its branches are
work in progress, not survivors, and a real run now would be refused.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.core.discovery import Survivor, SurvivorEvidence, map_branch
from app.core.effects import Assess, DispatchStage, Integrate, Salvage
from app.core.inputs import StartRun
from app.core.selection import frontier
from app.engine.driver import Engine, Ports
from app.engine.memory import MemoryEventLog
from app.engine.ports import LiveAttempt, StageCompletion
from app.gitops.evidence.repo import LocalRepo, OriginSnapshot, RepoError
from app.gitops.evidence.survivors import PREFIX, evidence_at
from app.gitops.runner import NETWORK_TIMEOUT, GitError, git
from app.local.launch import Plan, Request, load_plan, pick_base
from app.local.live import LiveRun, live_run


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


def read_plan(request: Request) -> tuple[LocalRepo, Plan, dict[str, str]]:
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
        return repo, load_plan(request, base, read, heads), heads


def survivors_read_only(repo: LocalRepo, plan: Plan, heads: dict[str, str]) -> list[Survivor]:
    """Every `roadmap-*` branch on origin with host evidence, fetched into a temporary repo."""
    branches = sorted(b for b in heads if b.startswith(PREFIX))
    if not branches:
        return []
    runs_root = repo.state_dir / "runs"
    with tempfile.TemporaryDirectory(prefix="odw-dry-run-") as holder:
        snap = Path(holder) / "snap.git"
        specs = [f"+refs/heads/{b}:refs/heads/{b}" for b in [plan.base, *branches]]
        try:
            git(Path(holder), "init", "--quiet", "--bare", str(snap))
            git(snap, "fetch", "--no-tags", "--quiet", repo.origin_url, *specs,
                timeout=NETWORK_TIMEOUT)  # fmt: skip
        except GitError as exc:
            error = SurvivorEvidence(collection_error=f"cannot fetch from origin: {exc}")
            return [Survivor(branch=b, head=heads[b], evidence=error) for b in branches]
        out = []
        for branch in branches:
            task_id, skip, _ = map_branch(plan.roadmap, branch)
            if skip is not None or task_id is None:
                out.append(Survivor(branch=branch, head=heads[branch]))  # the core skips it
                continue
            out.append(
                evidence_at(
                    snap,
                    f"refs/heads/{plan.base}",
                    f"refs/heads/{branch}",
                    branch=branch,
                    head=heads[branch],
                    task_id=task_id,
                    runs_root=runs_root,
                )
            )
        return out


def dry_run(request: Request) -> dict[str, Any]:
    repo, plan, heads = read_plan(request)
    live = live_run(repo.state_dir, plan.base)
    held = dict(plan.held)
    if live is not None:
        # The live run's branches are its work in progress, never survivors.
        for unit, why in held.items():
            if why.startswith("surviving branch"):
                held[unit] = f"in progress in the live run ({why.removeprefix('surviving ')})"
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
            held=sorted(held),
            survivors=[] if live is not None else survivors_read_only(repo, plan, heads),
        )
    )
    result = engine.run()
    f = frontier(plan.roadmap, held=held)
    result["held"] = [{"id": k, "reason": v} for k, v in held.items()]
    result["frontier"] = {
        "ready": [c.id for c in f.ready],
        "dispatch": [
            {"task": c.id, "stage": "plan", "branch": c.branch, "agent": plan.settings.agent}
            for c in f.ready[: config.max_parallel]
        ],
        "blocked": [b.to_json() for b in f.blocked],
        "gates": list(plan.settings.gates),
    }
    result["live"] = _live_json(live, plan.base)
    result["roadmapErrors"] = [p.to_json() for p in plan.roadmap.errors]
    if live is not None:
        result["halted"] = (
            f"refused: {live.describe(plan.base)}; a run started now would be refused "
            "(wait for it to end, or stop it and run the same command again to resume it)"
        )
    return result


def _live_json(live: LiveRun | None, base: str) -> dict[str, Any] | None:
    if live is None:
        return None
    return {"runId": live.run_id, "host": live.host, "pid": live.pid, "tasks": list(live.tasks),
            "summary": live.describe(base)}  # fmt: skip
