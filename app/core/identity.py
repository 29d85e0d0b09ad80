"""The machine identity ODW commits under: one type for the config file, the runner and
the integrator.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.core.git_identity import INTEGRATOR_EMAIL, INTEGRATOR_NAME, identity_env


class Identity(BaseModel):
    """Author and committer of every commit ODW makes (never the agent's choice)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    email: str = Field(min_length=3, pattern=r"^[^\s<>]+@[^\s<>]+$")

    def env(self) -> dict[str, str]:
        """The variables git reads the author and committer from."""
        return identity_env(self.name, self.email)


RUNNER_IDENTITY = Identity(name="odw-runner", email="odw-runner@users.noreply.github.com")
"""What the runner commits under unless the config or a flag names another."""

INTEGRATOR_IDENTITY = Identity(name=INTEGRATOR_NAME, email=INTEGRATOR_EMAIL)
"""What the integrator's squash commits carry unless the caller names another."""
