"""Which environment variables agents and gates never inherit."""

from __future__ import annotations

import pytest

from app.core.credentials import without_credentials


@pytest.mark.parametrize(
    "name",
    ["GITHUB_TOKEN", "GH_TOKEN", "ODW_WEBHOOK_SECRET", "ODW_ADMIN_TOKEN", "ODW_GIT_TOKEN",
     "ODW_PRIVATE_KEY_PATH", "ODW_PRIVATE_KEY", "ODW_ENV_FILE", "ACTIONS_RUNTIME_TOKEN",
     "ODW_SOME_FUTURE_SECRET", "github_token"],
    ids=lambda n: n.lower(),
)  # fmt: skip
def test_credentials_are_dropped_from_an_agents_environment(name: str) -> None:
    assert name not in without_credentials({name: "x", "PATH": "/bin"})


def test_what_an_agent_needs_is_kept() -> None:
    env = {
        "PATH": "/bin",
        "HOME": "/home/a",
        "ANTHROPIC_API_KEY": "model-key",
        "OPENAI_API_KEY": "model-key",
        "ODW_LOCAL_ATTEMPT": "tag",
        "ODW_COMPLETION_WORD": "ODW-STAGE-COMPLETE",
        "ODW_COMPLETION_TOKEN": "t",
    }
    assert without_credentials(env) == env
