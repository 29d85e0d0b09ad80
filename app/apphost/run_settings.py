"""A run's settings, read from the base branch at a pinned SHA.

`.github/odw.yml` (read by the core's `read_repo_config`) and the roadmap. A
problem is the core's `ConfigProblem` naming the file, the field and the line,
which the App shows as a failing `ODW · config` check run on that commit.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.naming import ROADMAP_PATH
from app.core.repo_config import ConfigProblem, RepoConfig, read_repo_config
from app.core.roadmap import Roadmap
from app.core.roadmap_parse import parse_roadmap


@dataclass(frozen=True)
class RunSettings:
    config: RepoConfig
    roadmap_text: str
    roadmap: Roadmap


def parse_settings(config_file: str | bytes | None, roadmap_text: str | None) -> RunSettings:
    """The base's `.github/odw.yml` (through the core's one reader) and roadmap."""
    config = read_repo_config(config_file)
    if roadmap_text is None:
        raise ConfigProblem(ROADMAP_PATH, "", None, "no roadmap on the base branch")
    roadmap = parse_roadmap(roadmap_text, external_met=config.config.external_met)
    if roadmap.errors:
        first = roadmap.errors[0]
        line = first.lines[0] if first.lines else None
        raise ConfigProblem(ROADMAP_PATH, ", ".join(first.ids), line, first.message)
    return RunSettings(config, roadmap_text, roadmap)
