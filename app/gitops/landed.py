"""Has a task already landed? Read the base branch, never a cache of our own.

A task has landed when a commit on the base carries its `ODW-Task:` trailer; it
is done when, in addition, its roadmap box is ticked on the base.
"""

from __future__ import annotations

from pathlib import Path

from app.core.roadmap_edit import is_ticked
from app.core.values import Value
from app.gitops.runner import GitRunner

TASK_TRAILER = "ODW-Task"
RUN_TRAILER = "ODW-Run"


class LandedState(Value):
    """What the base says about a task (a `Value`: no dataclass import per landing)."""

    commits: tuple[str, ...]  # newest first: commits on the base with the task's trailer
    ticked: bool  # the box is ticked in the roadmap on the base

    def __init__(self, commits: tuple[str, ...], ticked: bool) -> None:
        super().__init__(commits=commits, ticked=ticked)

    @property
    def landed(self) -> bool:
        return bool(self.commits)


def landed_state(
    runner: GitRunner, git_dir: Path, ref: str, task_id: str, roadmap_path: str
) -> LandedState:
    """Read from `ref`: commits with the task's trailer, and its roadmap box.

    The roadmap is read (`show`) while the history is searched (`log`): two
    reads of one ref that need not wait for each other, so one waits for both.
    """
    roadmap = runner.start("show", f"{ref}:{roadmap_path}", cwd=git_dir)
    fmt = f"%H%x1f%(trailers:key={TASK_TRAILER},valueonly,separator=%x1f)%x1e"
    try:
        out = runner.run(
            "log",
            "--fixed-strings",
            f"--grep={TASK_TRAILER}: {task_id}",
            f"--format={fmt}",
            ref,
            "--",
            cwd=git_dir,
        ).stdout
    except BaseException:
        roadmap.stop()
        raise
    shown = roadmap.result(check=False)
    commits = []
    for record in out.split("\x1e"):
        fields = record.strip("\n").split("\x1f")
        if len(fields) >= 2 and task_id in (v.strip() for v in fields[1:]):
            commits.append(fields[0])
    ticked = shown.returncode == 0 and is_ticked(shown.stdout, task_id)
    return LandedState(tuple(commits), ticked)
