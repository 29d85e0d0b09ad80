"""A launch asked for by a command: its options on the wire, and what they change.

`/odw run [--dry-run] [--task ID] [--max-parallel N]`, `/odw recover [MODE]
[ID]`, `/odw assess ID` and a retry after the run ended all start a run with
the repository's settings plus these options, read by the App host when it
starts the run. The settings are validated by `RunConfig` itself and the held
ids come from the core's rule (`app.core.held.held_ids`), so a command
launch behaves as `odw run --local` with the same flags.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.commands.host import Launch
from app.core.config import RunConfig, load_config
from app.core.discovery import Survivor
from app.core.held import held_ids
from app.core.roadmap import Roadmap
from app.gitops.evidence.repo import LocalRepo
from app.gitops.evidence.survivors import find_survivors


def options_of(launch: Launch) -> dict[str, Any]:
    """The launch's options as the App's start request carries them (camelCase)."""
    found: dict[str, Any] = {"by": launch.by}
    if launch.dry_run:
        found["dryRun"] = True
    if launch.task is not None:
        found["task"] = launch.task
    if launch.max_parallel is not None:
        found["maxParallel"] = launch.max_parallel
    if launch.resume_mode is not None:
        found["resumeMode"] = launch.resume_mode
    if launch.resume_task is not None:
        found["resumeTaskId"] = launch.resume_task
    return found


@dataclass(frozen=True)
class Start:
    """What a command launch adds to the StartRun the App host builds."""

    config: RunConfig
    held: list[str]
    survivors: list[Survivor]


def start_for(
    options: dict[str, Any],
    config: RunConfig,
    roadmap: Roadmap,
    base: str,
    repo: Callable[[], LocalRepo],
    runs_root: Path,
) -> Start:
    """The run settings and held ids for `options`; surviving branches are read
    from origin (through `repo`, the App's clone) only when they matter."""
    data = config.model_dump(by_alias=True)
    if options.get("dryRun"):
        data["dryRun"] = True
    if options.get("maxParallel"):
        data["maxParallel"] = options["maxParallel"]
    if options.get("resumeMode"):
        data["resumePartialBranches"] = True
        data["resumeMode"] = options["resumeMode"]
        data["resumeTaskId"] = options.get("resumeTaskId")
    checked = load_config(data, where="command")
    clone = repo()
    heads = clone.origin_heads()
    held = held_ids(roadmap, heads, options.get("task"))
    survivors = (
        find_survivors(clone, base, roadmap, heads, runs_root)
        if checked.resume_partial_branches
        else []
    )
    return Start(checked, sorted(held), survivors)
