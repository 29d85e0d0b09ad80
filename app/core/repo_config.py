"""`.github/odw.yml`: the repository's agent, gates, base branch and run settings.

One model for the runner, local mode and the App. The file is parsed elsewhere
(YAML is I/O's business); this validates the parsed data and explains errors.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from app.core.verdict import StageName

ResumeMode = Literal["assess", "review", "continue"]
CONFIG_PATH = ".github/odw.yml"


class _Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )


class RunSettings(_Model):
    """How a run behaves; the camelCase names are what the file spells."""

    max_parallel: int = Field(default=2, ge=1)
    stage_attempts: int = Field(default=2, ge=1)
    max_design_rounds: int = Field(default=2, ge=1)
    max_review_rounds: int = Field(default=3, ge=1)
    gate_retry_budget: int = Field(default=2, ge=0)
    route_budget: int = Field(default=6, ge=0)
    auto_merge: bool = True
    dry_run: bool = False
    assess_partial_branches: bool = True
    resume_partial_branches: bool = False
    resume_mode: ResumeMode = "assess"
    resume_task_id: str | None = None
    resume_max_candidates: int = Field(default=10, ge=1)
    stage_deadlines: dict[StageName, float] = Field(default_factory=dict)

    def deadline_for(self, stage: str, default: float) -> float:
        for name, seconds in self.stage_deadlines.items():
            if name == stage:
                return float(seconds)
        return default


class CommitIdentity(_Model):
    name: str = Field(min_length=1)
    email: str = Field(min_length=3, pattern=r"^[^\s<>]+@[^\s<>]+$")


class RepoConfig(_Model):
    agent: str | None = None
    gates: list[str] = Field(default_factory=list)
    base: str = "main"
    identity: CommitIdentity | None = None
    config: RunSettings = Field(default_factory=RunSettings)


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
