"""Host assessment and artefact salvage for local mode, from git evidence only.

Assessment is report-only and deterministic (no judgement agent): the host
fetches the task branch and reads what is on origin. The rules, first match
wins:

1. evidence could not be collected -> `continue-manual` (with the error)
2. the branch is not on origin, or has no commits ahead of the base -> `discard`
3. commits, the branch stays in scope, its committed ExecPlan says COMPLETE,
   and a passed gates verdict (of any local run) covers its head -> `adopt-complete`
4. commits in scope with a committed ExecPlan that is not BLOCKED -> `adopt-partial`
5. anything else -> `continue-manual`

In scope means the branch leaves the roadmap and `.github/` alone. Each rule
that could not be met is listed in `missingEvidence`.

Salvage commits the failed attempt's ExecPlan bundle onto the task branch on
origin under the machine identity, with git plumbing (a private index, no
worktree), never forced, never on the base.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from app.core.assessment import Assessment, SalvageResult, unassessable
from app.core.effects import Assess, Salvage
from app.core.identity import RUNNER_IDENTITY, Identity
from app.core.naming import EXECPLAN_DIR, ROADMAP_PATH, execplan_path, slug
from app.core.recovery import plan_status
from app.core.verdict import WRITE_STAGES, Verdict
from app.gitops.evidence.repo import REMOTE, LocalRepo, RepoError
from app.gitops.runner import NETWORK_TIMEOUT, GitError, git

OUT_OF_SCOPE = (ROADMAP_PATH, ".github/")
MAX_SALVAGE_BYTES = 1 << 20


@dataclass
class BranchFacts:
    head: str | None = None
    commits: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    plan: str | None = None
    error: str | None = None


def collect(repo: LocalRepo, base: str, branch: str, plan_path: str) -> BranchFacts:
    facts = BranchFacts()
    try:
        heads = repo.origin_heads()
        if branch not in heads:
            return facts
        repo.fetch(base, branch)
        base_ref, ref = f"refs/remotes/{REMOTE}/{base}", f"refs/remotes/{REMOTE}/{branch}"
        facts.head = heads[branch]
        log = git(repo.path, "log", "--format=%h %s", f"{base_ref}..{ref}").stdout
        facts.commits = [line for line in log.splitlines() if line.strip()]
        diff = git(repo.path, "diff", "--name-only", f"{base_ref}...{ref}").stdout
        facts.files = [line for line in diff.splitlines() if line.strip()]
        shown = git(repo.path, "show", f"{ref}:{plan_path}", check=False)
        facts.plan = shown.stdout if shown.returncode == 0 else None
    except (RepoError, GitError) as exc:
        facts.error = str(exc)
    return facts


class LocalAssessor:
    def __init__(self, repo: LocalRepo, run_dir: Path) -> None:
        self.repo = repo
        self.run_dir = run_dir

    def assess(self, request: Assess) -> Assessment:
        plan_path = execplan_path(request.task)
        facts = collect(self.repo, request.base, request.branch, plan_path)
        risk = ["assessed from host git evidence only; no agent judged the content"]
        if facts.error is not None:
            return unassessable(request.branch, facts.error, risk)
        if facts.head is None or not facts.commits:
            where = "is not on origin" if facts.head is None else "has no commits ahead of base"
            return Assessment(
                classification="discard",
                missing_evidence=[f"{request.branch} {where}"],
                residual_risk=risk,
                rationale=f"nothing to keep: {request.branch} {where}",
            )
        outside = [f for f in facts.files if f.startswith(OUT_OF_SCOPE)]
        scoped = not outside
        status = plan_status(facts.plan)
        validation = validation_for(self.run_dir.parent, request.task, facts.head)
        missing = []
        if not scoped:
            missing.append("changes outside the task's scope: " + ", ".join(outside))
        if status == "missing":
            missing.append(f"no committed ExecPlan at {plan_path}")
        elif status != "complete":
            missing.append(f"ExecPlan status is {status}, not COMPLETE")
        if not validation:
            missing.append(f"no passed gates verdict recorded for head {facts.head[:12]}")
        if scoped and status == "complete" and validation:
            cls = "adopt-complete"
        elif scoped and status not in ("missing", "blocked"):
            cls = "adopt-partial"
        else:
            cls = "continue-manual"
        return Assessment(
            classification=cls,  # type: ignore[arg-type]
            task_scoped=scoped,
            validation=validation,
            missing_evidence=[] if cls == "adopt-complete" else missing,
            residual_risk=risk,
            rationale=f"{len(facts.commits)} commit(s), {len(facts.files)} file(s) changed, "
            f"ExecPlan {status}; failed at {request.stage}: {request.detail}",
        )


def validation_for(runs_root: Path, task: str, head: str) -> list[str]:
    """Passed gates verdicts for exactly `head`, from any local run's stage outputs."""
    out = []
    run_dirs = sorted(p for p in runs_root.iterdir() if p.is_dir()) if runs_root.is_dir() else []
    for run_dir in run_dirs:
        for verdict, _ in stage_verdicts(run_dir, task, {"gates"}):
            if verdict.passed and verdict.head_after == head and verdict.gates:
                ran = ", ".join(g.command for g in verdict.gates)
                out.append(f"gates passed at {head[:12]} ({run_dir.name}): {ran}")
    return out


def stage_verdicts(run_dir: Path, task: str, stages: set[str]) -> list[tuple[Verdict, Path]]:
    """This run's verdicts of `task` for `stages`, oldest first."""
    root = run_dir / "stages" / slug(task)
    found = []
    for path in root.glob("*/verdict.json") if root.is_dir() else []:
        try:
            verdict = Verdict.model_validate(json.loads(path.read_text("utf-8")))
        except (OSError, ValueError):
            continue
        if verdict.stage in stages:
            found.append((path.stat().st_mtime, verdict, path.parent))
    found.sort(key=lambda item: item[0])
    return [(v, d) for _, v, d in found]


class LocalSalvager:
    def __init__(self, repo: LocalRepo, run_dir: Path, identity: Identity | None) -> None:
        self.repo = repo
        self.run_dir = run_dir
        self.identity = identity or RUNNER_IDENTITY

    def salvage(self, request: Salvage) -> SalvageResult:
        def skipped(detail: str) -> SalvageResult:
            return SalvageResult(classification=request.classification, skipped=True, detail=detail)

        bundles = [
            (v, d) for v, d in stage_verdicts(self.run_dir, request.task, set(WRITE_STAGES))
            if v.salvage.files
        ]  # fmt: skip
        if not bundles:
            return skipped("no salvage bundle: the failed attempt left no dirty ExecPlan")
        verdict, out_dir = bundles[-1]
        files = [f for f in verdict.salvage.files if _safe(out_dir / "salvage", f)]
        if not files:
            return skipped("no file in the salvage bundle passed the path checks")
        try:
            return self._commit(request, out_dir / "salvage", files)
        except (GitError, RepoError) as exc:
            return skipped(f"salvage commit failed: {exc}")

    def _commit(self, request: Salvage, bundle: Path, files: list[str]) -> SalvageResult:
        heads = self.repo.origin_heads()
        if request.branch not in heads:
            return SalvageResult(
                classification=request.classification,
                skipped=True,
                detail=f"{request.branch} is not on origin; nothing to commit onto",
            )
        self.repo.fetch(request.branch)
        parent = heads[request.branch]
        with tempfile.TemporaryDirectory(prefix="odw-salvage-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index"), **self.identity.env()}
            cwd = self.repo.path
            git(cwd, "read-tree", parent, env=env)
            for rel in files:
                blob = git(cwd, "hash-object", "-w", str(bundle / rel)).stdout.strip()
                git(cwd, "update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}", env=env)
            tree = git(cwd, "write-tree", env=env).stdout.strip()
        if tree == git(cwd, "rev-parse", f"{parent}^{{tree}}").stdout.strip():
            return SalvageResult(
                classification=request.classification,
                skipped=True,
                detail="the branch already holds these ExecPlan files; nothing to commit",
            )
        message = (
            f"odw: salvage ExecPlan artefacts for {request.task}\n\n"
            f"Classification: {request.classification}\n"
        )
        sha = git(
            cwd, "commit-tree", tree, "-p", parent, "-m", message, env=self.identity.env()
        ).stdout.strip()
        git(
            cwd,
            "push",
            "--no-verify",
            "--porcelain",
            REMOTE,
            f"{sha}:refs/heads/{request.branch}",
            timeout=NETWORK_TIMEOUT,
            env=self.repo.env,
        )
        return SalvageResult(
            classification=request.classification,
            committed=files,
            sha=sha,
            detail=f"committed {len(files)} ExecPlan file(s) on {request.branch}",
        )


def _safe(bundle: Path, rel: str) -> bool:
    """The runner already checked the paths; check again before a commit."""
    pure = PurePosixPath(rel)
    if pure.is_absolute() or ".." in pure.parts or not rel.startswith(EXECPLAN_DIR + "/"):
        return False
    if not rel.endswith(".md"):
        return False
    try:
        info = os.lstat(bundle / rel)
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode) and info.st_size <= MAX_SALVAGE_BYTES
