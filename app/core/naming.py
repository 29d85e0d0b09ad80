"""Names derived from a task id: branches, ExecPlan paths, integration branches.

One slug rule everywhere, so a branch found on a remote maps back to its id.
"""

from __future__ import annotations

import re

_NON_ALNUM = re.compile(r"[^0-9A-Za-z]+")
_BRANCH = re.compile(r"^roadmap-(?P<slug>\d+(?:-\d+)+)(?P<addendum>-addendum)?$")

ADDENDUM_SUFFIX = "-addendum"
EXECPLAN_DIR = "docs/execplans"
ROADMAP_PATH = "docs/roadmap.md"


def slug(task_id: str) -> str:
    """Every run of characters outside [0-9A-Za-z] becomes one dash."""
    return _NON_ALNUM.sub("-", task_id).strip("-")


def task_branch(task_id: str) -> str:
    return f"roadmap-{slug(task_id)}"


def addendum_branch(task_id: str) -> str:
    return f"roadmap-{slug(task_id)}{ADDENDUM_SUFFIX}"


def kept_branch(branch: str, retry: int) -> str:
    """Where a retry keeps the work `branch` held before it started over from the
    base (outside `roadmap-*`, so discovery never takes it for a task branch)."""
    return f"odw-kept/{branch}/retry-{retry}"


def integration_branch(task_id: str) -> str:
    return f"integrate-{slug(task_id)}"


def execplan_path(task_id: str) -> str:
    return f"{EXECPLAN_DIR}/{slug(task_id)}.md"


def task_id_from_branch(branch: str) -> tuple[str, bool] | None:
    """Map `roadmap-1-2-3[-addendum]` back to (`1.2.3`, is_addendum)."""
    m = _BRANCH.match(branch)
    if m is None:
        return None
    return m.group("slug").replace("-", "."), m.group("addendum") is not None


def squash_subject(headline: str | None, task_id: str) -> str:
    """The squash commit's subject: the whole headline, never cut, then the id.

    GitHub shows long subjects in full; a cut could split a word or leave a
    code span unclosed, so the headline is only collapsed onto one line.
    """
    title = " ".join((headline or "").split()) or f"roadmap task {task_id}"
    return f"{title} ({task_id})"
