"""The integration report and the host's check of it (one definition).

The integrator (`app/gitops`) produces the report; the core decides from it.
A task counts as landed only when all five booleans are true.

A plain frozen dataclass, not a pydantic model: `odw integrate` runs once per
landing, and importing pydantic would cost more than the landing's git work.
Pydantic models that embed it (events, inputs) still validate and dump it with
camelCase names through `__pydantic_config__`, and the two model methods its
callers use, `model_dump` and `model_copy`, keep their meaning.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar

INCOMPLETE_DETAIL = "integration incomplete (need ok+rebased+squashMerged+pushed+roadmapMarkedDone)"


def camel(name: str) -> str:
    """`squash_merged` -> `squashMerged`: the report's JSON names."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@dataclass(frozen=True, slots=True)
class IntegrationReport:
    """What one integration did, field by field, as JSON with camelCase names."""

    __pydantic_config__: ClassVar[dict[str, Any]] = {
        "alias_generator": camel,
        "populate_by_name": True,
    }

    ok: bool = False
    rebased: bool = False
    squash_merged: bool = False
    pushed: bool = False
    roadmap_marked_done: bool = False
    attempts: int = 0
    sha: str | None = None
    conflicts: str | None = None
    summary: str | None = None

    @classmethod
    def landed(cls, *, sha: str, attempts: int, summary: str | None = None) -> IntegrationReport:
        """A report for a task that is on the base: all five booleans true."""
        return cls(
            ok=True,
            rebased=True,
            squash_merged=True,
            pushed=True,
            roadmap_marked_done=True,
            attempts=attempts,
            sha=sha,
            summary=summary,
        )

    @property
    def complete(self) -> bool:
        return all(
            (self.ok, self.rebased, self.squash_merged, self.pushed, self.roadmap_marked_done)
        )

    def model_dump(self, *, by_alias: bool = False) -> dict[str, Any]:
        """Every field in declaration order, under its camelCase name with `by_alias`."""
        name = camel if by_alias else str
        return {name(f.name): getattr(self, f.name) for f in fields(self)}

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> IntegrationReport:
        return replace(self, **(update or {}))


def halt_detail(report: IntegrationReport) -> str | None:
    """None when the task may count as landed; otherwise why it halts at `integrate`.

    The conflicts text wins, then the summary; only when both are absent does the
    generic message apply.
    """
    if report.complete:
        return None
    return report.conflicts or report.summary or INCOMPLETE_DETAIL
