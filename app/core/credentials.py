"""Credentials no agent or gate may inherit: ODW's own secrets and forge tokens.

An agent runs untrusted instructions and a gate runs the repository's own
commands; either can print its environment into a log, a commit or a
comment. They keep what they need (the model provider's key, PATH, ...) and
lose every variable named here, whatever the host's environment holds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# ODW's service secrets, git credentials handed to the runner's own calls, and
# the token variables GitHub, the gh CLI and Actions use.
CREDENTIAL_VARS = frozenset(
    {
        "ODW_WEBHOOK_SECRET",
        "ODW_WEBHOOK_SECRET_PREVIOUS",
        "ODW_ADMIN_TOKEN",
        "ODW_PRIVATE_KEY_PATH",
        "ODW_PRIVATE_KEY",
        # The settings file `odw app register` writes: the key and the webhook secret.
        "ODW_ENV_FILE",
        "ODW_GIT_TOKEN",
        "ODW_GIT_ASKPASS_TOKEN",
        "ODW_DATABASE_URL",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GH_ENTERPRISE_TOKEN",
        "GITHUB_ENTERPRISE_TOKEN",
        "ACTIONS_RUNTIME_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
        "ACTIONS_ID_TOKEN_REQUEST_URL",
        "INPUT_PUSH-TOKEN",
        "INPUT_PUSH_TOKEN",
        "INPUT_GITHUB-TOKEN",
        "INPUT_GITHUB_TOKEN",
    }
)
_CREDENTIAL_PATTERN = re.compile(r"^ODW_.*(SECRET|TOKEN|PRIVATE_KEY)")
# Named like a credential but handed to the agent on purpose: the attempt's
# completion nonce, which the agent must print to pass its stage.
NOT_CREDENTIALS = frozenset({"ODW_COMPLETION_TOKEN"})


def is_credential(name: str) -> bool:
    upper = name.upper()
    if upper in NOT_CREDENTIALS:
        return False
    return upper in CREDENTIAL_VARS or bool(_CREDENTIAL_PATTERN.match(upper))


def without_credentials(env: Mapping[str, str]) -> dict[str, str]:
    """`env` less every credential variable."""
    return {k: v for k, v in env.items() if not is_credential(k)}
