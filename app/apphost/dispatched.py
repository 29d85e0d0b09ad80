"""Which workflow runs are ODW's own: the one rule every run lookup applies.

A person with write access can dispatch `odw-stage.yml` themselves (on any
branch, or a copy under another file name) and read every run's name in the
Actions tab. So a run is taken as an attempt's only when its id is the one
recorded at dispatch, its workflow file is exactly the stage workflow, it ran
on the task branch, and in the repository itself. The run's name carries a
keyed hash of the attempt's token (`run_tag`), never the token, so what a
reader sees there proves nothing; the tag only tells ODW's own dispatches
apart while resolving a run id GitHub did not return (GitHub Enterprise
Server answers a dispatch with 204 and no id).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable
from dataclasses import dataclass

from app.github.protocols import WorkflowRun

WORKFLOW = "odw-stage.yml"
WORKFLOW_PATH = f".github/workflows/{WORKFLOW}"
DISPATCH_EVENT = "workflow_dispatch"
# GitHub's clock and ours may differ a little; a run created this much before
# our dispatch still counts as created after it while resolving its id.
CLOCK_SKEW_SECONDS = 30.0
_TAG_CONTEXT = b"odw run-name tag v1"


class AmbiguousRun(RuntimeError):
    """More than one run could be the dispatched one: ODW never guesses."""


def tag_key(secret: str) -> bytes:
    """The key run tags are made with, derived from a secret only ODW holds
    (the App's private key), so nobody else can compute or check a tag."""
    return hmac.new(_TAG_CONTEXT, secret.encode("utf-8"), hashlib.sha256).digest()


def run_tag(key: bytes, token: str) -> str:
    """What the run's name shows for an attempt: an HMAC of its token under `key`."""
    return hmac.new(key, token.encode("utf-8"), hashlib.sha256).hexdigest()[:32]


def names_tag(title: str, tag: str) -> bool:
    """The run's name carries `tag` as a word of its own."""
    return tag in title.replace("[", " ").replace("]", " ").replace("(", " ").split()


@dataclass(frozen=True)
class Expected:
    """What ODW knows of an attempt's run from dispatching it."""

    repository: str  # OWNER/NAME
    branch: str  # the task branch the run was dispatched on
    run_id: int | None = None  # the id recorded at dispatch


def is_stage_workflow(path: str) -> bool:
    """`path` is the stage workflow itself (GitHub may add `@<ref>`), not
    `odw-stage.yml.yml` or a file in another directory."""
    return path == WORKFLOW_PATH or path.startswith(WORKFLOW_PATH + "@")


def shape_problem(run: WorkflowRun, expected: Expected) -> str | None:
    """Why `run` cannot be a stage run ODW dispatched for `expected`, by what it
    shows (file, event, branch, repository); None when it could be."""
    if not is_stage_workflow(run.path):
        return f"its workflow is {run.path!r}, not {WORKFLOW_PATH}"
    if run.event != DISPATCH_EVENT:
        return f"it was started by {run.event!r}, not {DISPATCH_EVENT}"
    if run.head_branch != expected.branch:
        return f"it ran on {run.head_branch!r}, not the task branch {expected.branch!r}"
    if run.head_repository != expected.repository:
        return f"it ran from {run.head_repository!r}, not {expected.repository}"
    return None


def rejection(run: WorkflowRun, expected: Expected) -> str | None:
    """Why `run` is not the attempt's run; None when it is."""
    if expected.run_id is None or run.id != expected.run_id:
        recorded = expected.run_id if expected.run_id is not None else "none"
        return f"its id {run.id} is not the run id recorded at dispatch ({recorded})"
    return shape_problem(run, expected)


def resolve(
    runs: Iterable[WorkflowRun], expected: Expected, *, tag: str, since: float | None, bot: str
) -> WorkflowRun | None:
    """The one run a dispatch GitHub gave no id for created, or None when none
    is listed yet: the stage workflow's dispatch on the task branch of the
    repository, started by ODW's bot at or after the dispatch, whose name
    carries the attempt's tag. A second candidate raises `AmbiguousRun`."""
    found = [
        run
        for run in runs
        if shape_problem(run, expected) is None
        and run.triggering_actor == bot
        and names_tag(run.display_title, tag)
        and (since is None or (run.created_at or 0.0) >= since - CLOCK_SKEW_SECONDS)
    ]
    if len(found) > 1:
        ids = ", ".join(str(run.id) for run in found)
        raise AmbiguousRun(
            f"runs {ids} all look like the dispatch on {expected.branch}; ODW does not guess"
        )
    return found[0] if found else None
