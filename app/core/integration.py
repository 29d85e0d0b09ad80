"""The integration report and the host's check of it (one definition).

The integrator (`app/gitops`) produces the report; the core decides from it.
A task counts as landed only when all five booleans are true.

A plain frozen dataclass, not a pydantic model: `odw integrate` runs once per
landing, and importing pydantic would cost more than the landing's git work.
Pydantic models that embed it (events, inputs) still validate and dump it with
camelCase names through `__pydantic_config__`; `to_json` is the same mapping
for callers that never import pydantic.
"""

from __future__ import annotations

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

    def with_summary(self, summary: str | None) -> IntegrationReport:
        return replace(self, summary=summary)

    def to_json(self) -> dict[str, Any]:
        """Every field under its camelCase name, in declaration order."""
        return {camel(f.name): getattr(self, f.name) for f in fields(self)}


def halt_detail(report: IntegrationReport) -> str | None:
    """None when the task may count as landed; otherwise why it halts at `integrate`.

    The conflicts text wins, then the summary; only when both are absent does the
    generic message apply.
    """
    if report.complete:
        return None
    return report.conflicts or report.summary or INCOMPLETE_DETAIL
