"""Read `.github/odw.yml` from disk (YAML) into the core's RepoConfig."""

from __future__ import annotations

from pathlib import Path

import yaml

from app.core.repo_config import RepoConfig, RepoConfigError, parse_repo_config

MAX_CONFIG_BYTES = 256 * 1024


def load_repo_config(path: Path) -> RepoConfig:
    """Parse and validate; RepoConfigError (a ValueError) names the file and the key."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise RepoConfigError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise RepoConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes")
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise RepoConfigError(f"{path}: not valid YAML: {exc}") from None
    return parse_repo_config(data, source=str(path))
