"""Where GitHub's published oracles live (installed by `make oracles` into
.cache/oracles), and the one function that decides what a test does without them."""

from __future__ import annotations

from pathlib import Path

from tests import needs

REPO_ROOT = Path(__file__).resolve().parents[2]
MODULES = REPO_ROOT / ".cache/oracles/node_modules/@octokit"
REST_OPENAPI = MODULES / "openapi/generated/api.github.com.json"
WEBHOOK_SCHEMAS = MODULES / "webhooks-schemas/schema.json"
WEBHOOK_EXAMPLES = MODULES / "webhooks-examples/api.github.com/index.json"
# Real exchanges with api.github.com, recorded by Octokit (tests/github/contract).
RECORDED = MODULES / "fixtures/scenarios/api.github.com"
RECORDED_INDEX = RECORDED / "get-repository/normalized-fixture.json"
# GitHub's GraphQL schema as introspection JSON (the fake validates every document).
GRAPHQL_SCHEMA = MODULES / "graphql-schema/schema.json"


def require_oracle(path: Path) -> Path:
    """Return `path`, or skip the calling test (fail it under CI) saying how to install it."""
    if not path.is_file():
        needs.unavailable(
            (
                f"GitHub's oracle {path.relative_to(REPO_ROOT)} is not installed",
                "run `make oracles` (needs npm) or `make test`, which installs it",
            )
        )
    return path
