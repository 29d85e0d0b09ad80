"""The git environment a commit identity sets, and the integrator's own identity.

Kept apart from the `Identity` model (`identity.py`), which validates the
configuration with pydantic: `odw integrate` commits as the integrator on every
landing and should not pay for importing pydantic to do it.
"""

from __future__ import annotations

INTEGRATOR_NAME = "ODW"
INTEGRATOR_EMAIL = "odw@localhost"


def identity_env(name: str, email: str) -> dict[str, str]:
    """The variables git reads the author and committer from."""
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }
