"""`.github/odw.yml`: the repository's agent, gates, base branch and run settings.

One model for the runner, local mode and the App. The file is parsed elsewhere
(YAML is I/O's business); this validates the parsed data and explains errors.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from app.core.config import RunConfig
from app.core.identity import Identity

CONFIG_PATH = ".github/odw.yml"

# The collaborator permission a commenter needs for `/odw` commands that change
# something (GitHub's levels, lowest first; `triage` and `read` are not enough).
CommandPermission = Literal["write", "maintain", "admin"]
# How a task lands: ODW pushes its squash commit to the base, or squash-merges
# the task's pull request (what a base protected against pushes needs).
IntegrationMethod = Literal["push", "pull-request"]


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class RepoConfig(_Model):
    agent: str | None = None
    gates: list[str] = Field(default_factory=list)
    base: str = "main"
    identity: Identity | None = None
    # Delete a task's branch (on origin and in a local clone) once it has landed,
    # as GitHub's "automatically delete head branches" does.
    delete_task_branches: bool = True
    # The App starts (or continues) a run when a push to the base changes the roadmap.
    auto: bool = False
    config: RunConfig = Field(default_factory=RunConfig)
    command_permission: CommandPermission = "write"
    # Bot accounts (`name[bot]`) whose `/odw` comments count; others are ignored.
    allowed_bots: tuple[str, ...] = ()
    integration: IntegrationMethod = "push"

    @field_validator("allowed_bots")
    @classmethod
    def _bot_logins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for login in value:
            if not login.endswith("[bot]") or len(login) <= len("[bot]"):
                raise ValueError(f"{login!r} is not a bot login like 'renovate[bot]'")
        return value


class RepoConfigError(ValueError):
    """The file's content is not a valid ODW configuration; the message says where."""


def parse_repo_config(data: object, *, source: str = CONFIG_PATH) -> RepoConfig:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise RepoConfigError(f"{source}: expected a mapping at the top level")
    try:
        return RepoConfig.model_validate(data)
    except ValidationError as exc:
        problems = [
            f"{'.'.join(str(p) for p in e['loc']) or 'top level'}: {e['msg']}" for e in exc.errors()
        ]
        raise RepoConfigError(f"{source}: " + "; ".join(problems)) from None
