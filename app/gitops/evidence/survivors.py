"""Survivors for a fresh local run: `roadmap-*` branches on origin, with host evidence.

The core maps names to roadmap units and decides; this module only collects
what git says about each branch that maps to an open unit: commits ahead of
the base, changed files (task scope), the committed ExecPlan, and gate results
any earlier local run recorded for the branch head. A branch on origin is
committed by construction, so it is always clean. Collection failures are
reported as evidence errors, never guessed around.
"""

from __future__ import annotations

from pathlib import Path

from app.core.discovery import Survivor, SurvivorEvidence, map_branch
from app.core.naming import execplan_path
from app.core.roadmap import Roadmap
from app.gitops.evidence.assess import OUT_OF_SCOPE, validation_for
from app.gitops.evidence.repo import REMOTE, LocalRepo, RepoError
from app.gitops.runner import GitError, git

PREFIX = "roadmap-"


def find_survivors(
    repo: LocalRepo, base: str, roadmap: Roadmap, heads: dict[str, str], runs_root: Path
) -> list[Survivor]:
    out = []
    for branch in sorted(b for b in heads if b.startswith(PREFIX)):
        task_id, skip, _ = map_branch(roadmap, branch)
        if skip is not None or task_id is None:
            out.append(Survivor(branch=branch, head=heads[branch]))  # the core skips it
        else:
            out.append(_collect(repo, base, branch, heads[branch], task_id, runs_root))
    return out


def _collect(
    repo: LocalRepo, base: str, branch: str, head: str, task_id: str, runs_root: Path
) -> Survivor:
    try:
        repo.fetch(base, branch)
    except RepoError as exc:
        return Survivor(
            branch=branch, head=head, evidence=SurvivorEvidence(collection_error=str(exc))
        )
    return evidence_at(
        repo.path,
        f"refs/remotes/{REMOTE}/{base}",
        f"refs/remotes/{REMOTE}/{branch}",
        branch=branch,
        head=head,
        task_id=task_id,
        runs_root=runs_root,
    )


def evidence_at(
    cwd: Path, base_ref: str, ref: str, *, branch: str, head: str, task_id: str, runs_root: Path
) -> Survivor:
    """What git says about `ref` against `base_ref` in the repository at `cwd` (read only)."""
    if git(cwd, "cat-file", "-e", f"{head}^{{commit}}", check=False).returncode != 0:
        return Survivor(branch=branch, head=head, readable=False)
    plan_path = execplan_path(task_id)
    try:
        commits = git(cwd, "rev-list", "--count", f"{base_ref}..{ref}").stdout.strip()
        diff = git(cwd, "diff", "--name-only", f"{base_ref}...{ref}").stdout
        files = [line for line in diff.splitlines() if line.strip()]
        has_plan = git(cwd, "cat-file", "-e", f"{ref}:{plan_path}", check=False).returncode == 0
        plan, readable = None, True
        if has_plan:
            try:
                shown = git(cwd, "show", f"{ref}:{plan_path}", check=False)
                plan, readable = shown.stdout, shown.returncode == 0
            except UnicodeDecodeError:
                plan, readable = "", False
    except GitError as exc:
        return Survivor(
            branch=branch, head=head, evidence=SurvivorEvidence(collection_error=str(exc))
        )
    evidence = SurvivorEvidence(
        clean=True,
        commits=int(commits or 0),
        task_scoped=not any(f.startswith(OUT_OF_SCOPE) for f in files),
        execplan=plan,
        execplan_readable=readable,
        validation=validation_for(runs_root, task_id, head),
    )
    return Survivor(branch=branch, head=head, evidence=evidence)


def kept_branch_evidence(
    repo: LocalRepo, base: str, branch: str, task_id: str, runs_root: Path
) -> SurvivorEvidence:
    """The evidence for one task's kept branch, read now (an operator's `recover`
    or `rearm` in an open run); a branch that is gone is a collection error."""
    try:
        head = repo.origin_heads().get(branch)
    except (RepoError, GitError) as exc:
        return SurvivorEvidence(collection_error=str(exc))
    if head is None:
        return SurvivorEvidence(collection_error=f"{branch} is not on origin")
    found = _collect(repo, base, branch, head, task_id, runs_root)
    if not found.readable:
        return SurvivorEvidence(collection_error=f"the head of {branch} cannot be read")
    return found.evidence
