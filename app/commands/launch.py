"""A launch asked for by a command: what its options change in the run it starts.

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

from app.commands.host import Launch
from app.core.config import RunConfig, load_config
from app.core.discovery import Survivor
from app.core.held import held_ids
from app.core.roadmap import Roadmap
from app.gitops.evidence.repo import LocalRepo
from app.gitops.evidence.survivors import find_survivors


@dataclass(frozen=True)
class Start:
    """What a command launch adds to the StartRun the App host builds."""

    config: RunConfig
    held: list[str]
    survivors: list[Survivor]


def start_for(
    launch: Launch,
    config: RunConfig,
    roadmap: Roadmap,
    base: str,
    repo: Callable[[], LocalRepo],
    runs_root: Path,
) -> Start:
    """The run settings and held ids for `launch`; surviving branches are read
    from origin (through `repo`, the App's clone) only when they matter."""
    data = config.model_dump(by_alias=True)
    if launch.dry_run:
        data["dryRun"] = True
    if launch.max_parallel:
        data["maxParallel"] = launch.max_parallel
    if launch.resume_mode:
        data["resumePartialBranches"] = True
        data["resumeMode"] = launch.resume_mode
        data["resumeTaskId"] = launch.resume_task
    checked = load_config(data, where="command")
    clone = repo()
    heads = clone.origin_heads()
    held = held_ids(roadmap, heads, launch.task)
    survivors = (
        find_survivors(clone, base, roadmap, heads, runs_root)
        if checked.resume_partial_branches
        else []
    )
    return Start(checked, sorted(held), survivors)
