"""Where GitHub's published oracles live (installed by `make oracles` into
.cache/oracles), and the one function that decides what a test does without them."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
MODULES = REPO_ROOT / ".cache/oracles/node_modules/@octokit"
REST_OPENAPI = MODULES / "openapi/generated/api.github.com.json"
WEBHOOK_SCHEMAS = MODULES / "webhooks-schemas/schema.json"
WEBHOOK_EXAMPLES = MODULES / "webhooks-examples/api.github.com/index.json"


def require_oracle(path: Path) -> Path:
    """Return `path`, or skip the calling test saying how to install it.

    The single switch point: under CI a missing oracle should fail, not skip
    (a shared helper in tests/ will make that so)."""
    if not path.is_file():
        pytest.skip(
            f"GitHub's oracle {path.relative_to(REPO_ROOT)} is not installed: "
            "`make oracles` installs it with npm"
        )
    return path
