"""The App's auth preflight: before a run dispatches anything, can this
installation read the base, push task branches, create check runs and
dispatch the stage workflow in this repository?

Each need is asked of GitHub itself: an installation token narrowed to the
repository and to that one permission is minted (GitHub refuses with 422 a
permission the installation was not granted). These are the very tokens the
ports use afterwards (one cache, keyed by permission set), so the check costs
no request a run would not make anyway.

Then the stage workflow: GitHub dispatches a workflow by file name only when
the default branch has the file, and runs the copy on the dispatched branch
(task branches start from the base), so `GET .../actions/workflows/odw-stage.yml`
must find it and, when the base is another branch, the base must have it too
(https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows#workflow_dispatch).
"""

from __future__ import annotations

from app.apphost.dispatched import WORKFLOW, WORKFLOW_PATH
from app.core.preflight import Missing, Preflight
from app.github.client import RepositoryClient
from app.github.errors import GitHubError

NEEDS: tuple[tuple[str, str, str], ...] = (
    ("contents", "read", "read the base"),
    ("contents", "write", "push task branches"),
    ("checks", "write", "create check runs"),
    ("actions", "write", "dispatch the stage workflow"),
)
FIND_WORKFLOW = "find the stage workflow"


def check(client: RepositoryClient, base: str, default: str | None = None) -> Preflight:
    """What the installation cannot do for a run on `base`; `default`, the
    default branch when the caller already read it (it is not read twice)."""
    missing = []
    for permission, level, why in NEEDS:
        try:
            client.authorise({permission: level})
        except GitHubError as exc:
            missing.append(
                Missing(permission=permission, level=level, needed_for=why, detail=str(exc)[:300])
            )
    if not {m.permission for m in missing} & {"contents", "actions"}:
        problem = workflow_problem(client, base, default)
        if problem is not None:
            missing.append(problem)
    return Preflight(checked=[why for _, _, why in NEEDS] + [FIND_WORKFLOW], missing=missing)


def workflow_problem(
    client: RepositoryClient, base: str, default: str | None = None
) -> Missing | None:
    """What to commit where when GitHub could not dispatch the stage workflow for
    a run on `base`; None when it can."""
    default = default or client.contents.default_branch()
    here = client.full_name
    if not client.runs.knows_workflow(WORKFLOW):
        other = (
            f"; this run's base `{base}` is not the default branch, and GitHub looks "
            "for a workflow to dispatch only on the default branch"
            if base != default
            else ""
        )
        fix = (
            f"commit {WORKFLOW_PATH} (`odw init` writes it) to `{default}`, the default "
            f"branch of {here}, then start the run again{other}"
        )
        detail = f"GET actions/workflows/{WORKFLOW}: 404, not on `{default}`"
        return _missing(fix, detail)
    if base != default and client.contents.file_at(WORKFLOW_PATH, base) is None:
        fix = (
            f"commit {WORKFLOW_PATH} to `{base}`, this run's base, as it is on `{default}`: "
            "GitHub runs the copy on the dispatched branch, and task branches start "
            f"from `{base}`"
        )
        return _missing(fix, f"{WORKFLOW_PATH} is not on `{base}`")
    return None


def _missing(fix: str, detail: str) -> Missing:
    return Missing(
        permission="actions",
        level="write",
        needed_for="dispatch the stage workflow",
        detail=detail,
        fix=fix,
    )
