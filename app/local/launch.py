"""Everything a local run needs before it starts, read from origin.

The base: `--base`, else the `base` set in `.github/odw.yml` on origin's default
branch, else origin's HEAD branch, else `main`. The configuration and the
roadmap come from `origin/<base>`. Errors are typed so the CLI can map them to
exit codes: `RepoError` (1), `SettingsError` and `RoadmapInvalid` (2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.core.held import NotAnOpenTask
from app.core.held import held_ids as core_held_ids
from app.core.naming import ROADMAP_PATH
from app.core.repo_config import CONFIG_PATH
from app.core.roadmap import Roadmap
from app.core.roadmap_parse import parse_roadmap
from app.gitops.evidence.repo import REMOTE, RepoError
from app.local.run_options import (
    LocalSettings,
    Overrides,
    SettingsError,
    configured_base,
    read_config_file,
    read_layer,
    resolve,
)

Reader = Callable[[str, str], str | None]  # (branch, path) -> text at origin/<branch>


class RoadmapInvalid(ValueError):
    """The roadmap has errors: nothing is scheduled (exit 2)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Request:
    """What the command line asked for."""

    path: Path
    agent: str | None = None
    base: str | None = None
    max_parallel: int | None = None
    task: str | None = None
    dry_run: bool = False
    config_file: Path | None = None
    resume: str | None = None


@dataclass(frozen=True)
class Plan:
    base: str
    settings: LocalSettings
    roadmap_text: str
    roadmap: Roadmap
    held: dict[str, str] = field(default_factory=dict)  # id -> why it is held


def pick_base(request: Request, default_branch: str | None, read: Reader) -> str:
    """`--base`, else what odw.yml on origin's default branch says, else that branch."""
    if request.base:
        return request.base
    start = default_branch or "main"
    text = read(start, CONFIG_PATH)
    return configured_base(read_layer(text, f"{CONFIG_PATH} on {REMOTE}/{start}")) or start


def load_plan(request: Request, base: str, read: Reader, heads: dict[str, str]) -> Plan:
    """Settings and roadmap from origin/<base>, the held ids, all validated."""
    source = f"{CONFIG_PATH} on {REMOTE}/{base}"
    repo_file = read_layer(read(base, CONFIG_PATH), source)
    override = read_config_file(request.config_file) if request.config_file else None
    settings = resolve(
        repo_file,
        override,
        Overrides(agent=request.agent, max_parallel=request.max_parallel, resume=request.resume),
        base=base,
        repo_source=source,
        override_source=str(request.config_file),
    )
    roadmap_text = read(base, ROADMAP_PATH)
    if roadmap_text is None:
        raise RepoError(f"{ROADMAP_PATH} is missing on {REMOTE}/{base}")
    roadmap = parse_roadmap(roadmap_text, external_met=settings.config.external_met)
    if not roadmap.valid:
        raise RoadmapInvalid([f"{ROADMAP_PATH}: {p.kind}: {p.message}" for p in roadmap.errors])
    return Plan(base, settings, roadmap_text, roadmap, held_ids(roadmap, heads, request.task))


def held_ids(roadmap: Roadmap, heads: dict[str, str], only: str | None) -> dict[str, str]:
    """The core's held ids, with a `--task` that cannot run as a settings error (exit 2)."""
    try:
        return core_held_ids(roadmap, heads, only, remote=REMOTE)
    except NotAnOpenTask as exc:
        raise SettingsError(str(exc)) from exc
