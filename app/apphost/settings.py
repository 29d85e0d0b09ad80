"""A run's settings, read from the base branch at a pinned SHA.

`.github/odw.yml` (validated by the one model, `RepoConfig`) and the roadmap.
A problem is a `ConfigProblem` naming the file, the field and the line, which
the App shows as a failing `ODW · config` check run on that commit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import ValidationError

from app.core.repo_config import CONFIG_PATH, RepoConfig
from app.core.roadmap import Roadmap
from app.core.roadmap_parse import parse_roadmap
from app.local.repo import ROADMAP_PATH

MAX_FILE_BYTES = 1 << 20


@dataclass(frozen=True)
class ConfigProblem(Exception):
    path: str
    field: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.path}" + (f":{self.line}" if self.line else "")
        return f"{where}: {self.field + ': ' if self.field else ''}{self.message}"


@dataclass(frozen=True)
class RunSettings:
    config: RepoConfig
    roadmap_text: str
    roadmap: Roadmap


def _line_of(text: str, loc: tuple[Any, ...]) -> int | None:
    """1-based line of the YAML node at `loc` (or its nearest parent), if found."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    line = node.start_mark.line + 1 if node is not None else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next(
                (
                    (k, v)
                    for k, v in node.value
                    if isinstance(k, yaml.ScalarNode) and _matches(k.value, str(part))
                ),
                None,
            )
            if match is None:
                return line
            line, node = match[0].start_mark.line + 1, match[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            if part >= len(node.value):
                return line
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line


def _matches(key: str, field: str) -> bool:
    camel = field.split("_")[0] + "".join(w.title() for w in field.split("_")[1:])
    return key in (field, camel)


def parse_config(text: str | None) -> RepoConfig:
    """`.github/odw.yml` (absent means the defaults); ConfigProblem when invalid."""
    if text is None:
        return RepoConfig()
    if len(text.encode()) > MAX_FILE_BYTES:
        raise ConfigProblem(CONFIG_PATH, "", None, f"larger than {MAX_FILE_BYTES} bytes")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise ConfigProblem(CONFIG_PATH, "", line, f"not valid YAML: {exc}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigProblem(CONFIG_PATH, "", 1, "expected a mapping at the top level")
    try:
        return RepoConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = tuple(err["loc"])
        field = ".".join(str(p) for p in loc)
        raise ConfigProblem(CONFIG_PATH, field, _line_of(text, loc), err["msg"]) from None


def parse_settings(config_text: str | None, roadmap_text: str | None) -> RunSettings:
    config = parse_config(config_text)
    if roadmap_text is None:
        raise ConfigProblem(ROADMAP_PATH, "", None, "no roadmap on the base branch")
    roadmap = parse_roadmap(roadmap_text, external_met=config.config.external_met)
    if roadmap.errors:
        first = roadmap.errors[0]
        line = first.lines[0] if first.lines else None
        raise ConfigProblem(ROADMAP_PATH, ", ".join(first.ids), line, first.message)
    return RunSettings(config, roadmap_text, roadmap)
