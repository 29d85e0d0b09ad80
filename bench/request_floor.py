"""The REST requests a landed task cannot do without: the floor `make bench` prints.

One line per request the pipeline needs on the happy path, whatever the code
does around it, and why it cannot go. Everything else the App sends (re-reads,
probes, intermediate check-run and comment edits) is overhead measured against
this floor.
"""

from __future__ import annotations

# (scope, request, why it cannot go). Scope: "stage" per stage run dispatched,
# "task" per landed task, "run" once per run (spread over its landed tasks).
NEEDED: tuple[tuple[str, str, str], ...] = (
    ("stage", "POST workflows/{id}/dispatches", "the stage runs on Actions, started by the App"),
    ("stage", "GET runs/{id}/artifacts", "the verdict's artifact id is known only to GitHub"),
    ("stage", "GET artifacts/{id}/zip", "the verdict itself"),
    ("task", "POST git/refs", "the task's branch"),
    ("task", "POST pulls", "the draft pull request a maintainer reviews"),
    ("task", "POST check-runs", "the task's check on its branch head"),
    ("task", "POST issues/{n}/comments", "the status comment"),
    (
        "task",
        "POST graphql",
        "once landed, one request: the comment says so, the PR is closed, its check concluded",
    ),
    ("run", "GET actions/workflows/{file}", "the stage workflow exists"),
    ("run", "GET contents/.github/odw.yml", "the repository's settings"),
    ("run", "GET contents/{roadmap}", "the roadmap"),
    ("run", "GET git/ref/heads/{base}", "the base head the run pins"),
    ("run", "POST check-runs", "the run's check"),
    ("run", "PATCH check-runs/{id}", "the run's check concluded"),
)


def floor(stages: int, landed: int) -> float:
    """The fewest REST requests per landed task for `stages` stage runs in all."""
    per = {scope: sum(1 for s, _, _ in NEEDED if s == scope) for scope in ("stage", "task", "run")}
    total = per["stage"] * stages + per["task"] * landed + per["run"]
    return total / landed
