"""The integration report and the host's check of it (one definition).

The integrator (`app/gitops`) produces the report; the core decides from it.
A task counts as landed only when all five booleans are true.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

INCOMPLETE_DETAIL = "integration incomplete (need ok+rebased+squashMerged+pushed+roadmapMarkedDone)"


class IntegrationReport(BaseModel):
    """What one integration did, field by field, as JSON with camelCase names."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True)

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


def halt_detail(report: IntegrationReport) -> str | None:
    """None when the task may count as landed; otherwise why it halts at `integrate`.

    The conflicts text wins, then the summary; only when both are absent does the
    generic message apply.
    """
    if report.complete:
        return None
    return report.conflicts or report.summary or INCOMPLETE_DETAIL
