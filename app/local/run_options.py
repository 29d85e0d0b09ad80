"""Local mode's settings: `.github/odw.yml` on the base, a `--config` file, flags.

Precedence, lowest first: the file on `origin/<base>`, the `--config` file (the
same shape; top-level keys replace, `config` keys merge one by one), then the
command-line flags. Each layer is validated on its own first so an error names
the file (and the field) it came from.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.config import RunConfig
from app.core.identity import Identity
from app.core.repo_config import (
    CONFIG_PATH,
    ConfigProblem,
    RepoConfig,
    parse_repo_config,
    read_repo_config,
)


class SettingsError(ValueError):
    """A configuration that cannot run (exit 2); the message names the field."""


@dataclass(frozen=True)
class Overrides:
    """What the command line says; None means "not given"."""

    agent: str | None = None
    max_parallel: int | None = None
    resume: str | None = None  # `--resume MODE`: resumePartialBranches on, with that mode
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class LocalSettings:
    agent: str
    gates: tuple[str, ...]
    base: str
    identity: Identity | None
    config: RunConfig
    delete_task_branches: bool = True


def read_layer(text: str | bytes | None, source: str) -> dict[str, Any]:
    """One file's layer: the keys it sets, read by the core's one reader (so an
    error names the file, the field and the line); no file is an empty layer."""
    try:
        config = read_repo_config(text, source)
    except ConfigProblem as problem:
        raise SettingsError(str(problem)) from None
    return config.model_dump(by_alias=True, exclude_unset=True)


def read_config_file(path: Path) -> dict[str, Any]:
    """A `--config` file: YAML or JSON with the shape of `.github/odw.yml`."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror or exc}") from None
    return read_layer(data, str(path))


def merge(lower: dict[str, Any], upper: dict[str, Any]) -> dict[str, Any]:
    out = {**lower, **{k: v for k, v in upper.items() if k != "config"}}
    if "config" in upper:
        low, up = lower.get("config") or {}, upper.get("config") or {}
        out["config"] = {**low, **up} if isinstance(low, dict) and isinstance(up, dict) else up
    return out


def _validate(data: dict[str, Any], source: str) -> RepoConfig:
    try:
        return parse_repo_config(data, source=source)
    except ConfigProblem as problem:
        raise SettingsError(str(problem)) from None


def resolve(
    repo_file: dict[str, Any],
    override_file: dict[str, Any] | None,
    flags: Overrides,
    *,
    base: str,
    repo_source: str = CONFIG_PATH,
    override_source: str = "--config",
    require_agent: bool = True,
) -> LocalSettings:
    """Layer the three sources; SettingsError names the first bad field."""
    _validate(repo_file, repo_source)
    merged = repo_file
    if override_file is not None:
        _validate(override_file, override_source)
        merged = merge(merged, override_file)
    cli: dict[str, Any] = dict(flags.extra)
    if flags.agent is not None:
        cli["agent"] = flags.agent
    config: dict[str, Any] = {}
    if flags.max_parallel is not None:
        config["maxParallel"] = flags.max_parallel
    if flags.resume is not None:
        config.update(resumePartialBranches=True, resumeMode=flags.resume)
    if config:
        cli["config"] = config
    merged = merge(merged, cli)
    cfg = _validate(merged, "command line")
    agent = (cfg.agent or "").strip()
    if require_agent and not agent:
        raise SettingsError(f'no agent command: pass --agent "CMD" or set `agent` in {CONFIG_PATH}')
    return LocalSettings(
        agent, tuple(cfg.gates), base, cfg.identity, cfg.config, cfg.delete_task_branches
    )


def configured_base(data: dict[str, Any]) -> str | None:
    """The `base` key when the file sets one explicitly (the model defaults it)."""
    value = data.get("base")
    return value if isinstance(value, str) and value.strip() else None
