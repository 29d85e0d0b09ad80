"""The run configuration: one typed object, seed names in JSON.

Every budget the core enforces comes from here, so a rehearsal (`odw simulate`)
and a real run obey the same numbers. Invalid values are rejected with the
field named, never clamped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

GATE_IDS: tuple[str, ...] = ("marker", "schema", "build", "contract", "static", "review")
DISPATCHED_STAGES: tuple[str, ...] = (
    "plan",
    "design-review",
    "implement",
    "gates",
    "review",
    "fix",
)
ResumeMode = Literal["assess", "review", "continue"]

DEFAULT_GATE_BUDGET = 2
DEFAULT_ROUTE_BUDGET = 2
# Agent stages get thirty minutes unless configured; the runner enforces it and
# reports exit 124 when it fires (seed 004 deadline semantics).
DEFAULT_STAGE_DEADLINE = 1800.0


class RunConfig(BaseModel):
    """How one run behaves; JSON uses the seed's camelCase names."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    max_parallel: int = Field(default=2, ge=1, le=64)
    stage_attempts: int = Field(default=2, ge=1, le=10)
    max_design_rounds: int = Field(default=4, ge=1, le=20)
    max_review_rounds: int = Field(default=3, ge=1, le=20)
    gate_retry_budget: int | dict[str, int] = DEFAULT_GATE_BUDGET
    route_budget: int | dict[str, int] = DEFAULT_ROUTE_BUDGET
    auto_merge: bool = True
    dry_run: bool = False
    assess_partial_branches: bool = True
    resume_partial_branches: bool = False
    resume_mode: ResumeMode = "assess"
    resume_task_id: str | None = None
    resume_max_candidates: int = Field(default=4, ge=1, le=100)
    stage_deadlines: dict[str, Annotated[float, Field(gt=0)]] = Field(default_factory=dict)
    # Other projects' work declared met, as the roadmap writes it ("Podbot Step
    # 4.5"); every other external reference keeps its task blocked. A run setting
    # so that a replayed run reads the roadmap exactly as it started.
    external_met: tuple[str, ...] = ()

    @field_validator("gate_retry_budget", mode="before")
    @classmethod
    def _gate_budgets(cls, value: object) -> object:
        return _budget(value, GATE_IDS, "gate")

    @field_validator("route_budget", mode="before")
    @classmethod
    def _route_budgets(cls, value: object) -> object:
        return _budget(value, DISPATCHED_STAGES, "stage")

    @field_validator("stage_deadlines")
    @classmethod
    def _known_deadline_stages(cls, value: dict[str, float]) -> dict[str, float]:
        _only_stages(value)
        return value

    @field_validator("resume_task_id")
    @classmethod
    def _dotted_id(cls, value: str | None) -> str | None:
        if value is not None and not all(p.isdigit() for p in value.split(".")):
            raise ValueError("must be a dotted roadmap id such as 1.2.3")
        return value

    def gate_budget(self, gate: str) -> int:
        if isinstance(self.gate_retry_budget, int):
            return self.gate_retry_budget
        return self.gate_retry_budget.get(gate, DEFAULT_GATE_BUDGET)

    def route_budget_for(self, stage: str) -> int:
        if isinstance(self.route_budget, int):
            return self.route_budget
        return self.route_budget.get(stage, DEFAULT_ROUTE_BUDGET)

    def deadline(self, stage: str) -> float:
        return self.stage_deadlines.get(stage, DEFAULT_STAGE_DEADLINE)

    def to_json(self) -> dict[str, object]:
        return self.model_dump(mode="json", by_alias=True)


def _only_stages(value: Mapping[str, object]) -> None:
    unknown = sorted(set(value) - set(DISPATCHED_STAGES))
    if unknown:
        raise ValueError(
            f"unknown stage {unknown[0]!r}; stages are " + ", ".join(DISPATCHED_STAGES)
        )


def _budget(value: object, names: tuple[str, ...], what: str) -> object:
    """A non-negative int, or a mapping of known names to one."""
    if isinstance(value, Mapping):
        for name, n in value.items():
            if name not in names:
                raise ValueError(f"unknown {what} {name!r}; {what}s are " + ", ".join(names))
            _count(n, f"{name}: ")
        return dict(value)
    _count(value, "")
    return value


def _count(n: object, prefix: str) -> None:
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError(f"{prefix}must be a non-negative integer (or a mapping of them)")


class ConfigError(ValueError):
    """A configuration that cannot run; the message names the field."""


def load_config(data: object, *, where: str = "config") -> RunConfig:
    """Validate plain JSON into a RunConfig, or raise ConfigError naming the field."""
    if data is None:
        data = {}
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(first_error(exc, where)) from None


def first_error(exc: ValidationError, where: str) -> str:
    """`where.field.sub: message` for the first error pydantic found."""
    err = exc.errors()[0]
    path = where
    for part in err["loc"]:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not _is_union_tag(part):
            path += f".{part}"
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        msg = "unknown field"
    return f"{path}: {msg}"


def _is_union_tag(part: object) -> bool:
    """Pydantic names union branches (`int`, `dict[...]`) in locations; drop them."""
    return isinstance(part, str) and (
        part in {"int", "str", "float", "bool"} or part.startswith(("dict[", "list["))
    )


# What `rearm` may change for one task: prompt text, and the limits below, which
# obey exactly RunConfig's rules (validated by RunConfig itself).
OVERRIDE_TEXT: tuple[str, ...] = ("instructions", "agent", "model")
OVERRIDE_LIMITS: tuple[str, ...] = ("stageAttempts", "gateRetryBudget", "routeBudget")
OVERRIDE_FIELDS: frozenset[str] = frozenset(OVERRIDE_TEXT + OVERRIDE_LIMITS)


def load_overrides(data: Mapping[str, object], *, where: str = "rearm") -> dict[str, Any]:
    """Check a task's overrides, or raise ConfigError naming the field."""
    unknown = sorted(set(data) - OVERRIDE_FIELDS)
    if unknown:
        raise ConfigError(
            f"{where}.{unknown[0]}: unknown field; rearm can change "
            + ", ".join(sorted(OVERRIDE_FIELDS))
        )
    for name in OVERRIDE_TEXT:
        if name in data and not isinstance(data[name], str):
            raise ConfigError(f"{where}.{name}: must be text")
    load_config({k: v for k, v in data.items() if k in OVERRIDE_LIMITS}, where=where)
    return dict(data)


def task_stage_attempts(config: RunConfig, overrides: Mapping[str, Any]) -> int:
    return int(overrides.get("stageAttempts", config.stage_attempts))


def task_gate_budget(config: RunConfig, overrides: Mapping[str, Any], gate: str) -> int:
    return _override(overrides.get("gateRetryBudget"), gate, config.gate_budget(gate))


def task_route_budget(config: RunConfig, overrides: Mapping[str, Any], stage: str) -> int:
    return _override(overrides.get("routeBudget"), stage, config.route_budget_for(stage))


def _override(value: object, name: str, default: int) -> int:
    """A task's budget: an int for every name, or a mapping; otherwise the run's."""
    if isinstance(value, int):
        return value
    if isinstance(value, Mapping) and name in value:
        return int(value[name])
    return default
