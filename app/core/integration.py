"""The integration report and the host's check of it (one definition).

The integrator (`app/gitops`) produces the report; the core decides from it.
A task counts as landed only when all five booleans are true.

A `Value` (`values.py`), neither a pydantic model nor a dataclass: `odw
integrate` runs once per landing, and importing pydantic, or `dataclasses`
(which imports `inspect`), would cost more than a git call of the landing.
Pydantic models that embed it (events, inputs) declare it as `Report`
(`integration_schema.py`) and validate and dump it exactly as they did the
frozen dataclass it was, camelCase names and all; the two model methods its
callers use, `model_dump` and `model_copy`, keep their meaning.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.core.values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

INCOMPLETE_DETAIL = "integration incomplete (need ok+rebased+squashMerged+pushed+roadmapMarkedDone)"


def camel(name: str) -> str:
    """`squash_merged` -> `squashMerged`: the report's JSON names."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class IntegrationReport(Value):
    """What one integration did, field by field, as JSON with camelCase names."""

    # Immutable, compared and hashed by value, like the frozen dataclass it was
    # (the docstring above is its JSON schema's description, unchanged).

    FIELDS = __match_args__ = (
        "ok", "rebased", "squash_merged", "pushed", "roadmap_marked_done", "attempts", "sha",
        "conflicts", "summary",
    )  # fmt: skip

    ok: bool
    rebased: bool
    squash_merged: bool
    pushed: bool
    roadmap_marked_done: bool
    attempts: int
    sha: str | None
    conflicts: str | None
    summary: str | None

    def __init__(
        self,
        ok: bool = False,
        rebased: bool = False,
        squash_merged: bool = False,
        pushed: bool = False,
        roadmap_marked_done: bool = False,
        attempts: int = 0,
        sha: str | None = None,
        conflicts: str | None = None,
        summary: str | None = None,
    ) -> None:  # pragma: no mutate block (the schema twin reads these defaults)
        super().__init__(
            ok=ok, rebased=rebased, squash_merged=squash_merged, pushed=pushed,
            roadmap_marked_done=roadmap_marked_done, attempts=attempts, sha=sha,
            conflicts=conflicts, summary=summary,
        )  # fmt: skip

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
        return {name(field): getattr(self, field) for field in self.FIELDS}

    def model_copy(self, *, update: Mapping[str, Any] | None = None) -> IntegrationReport:
        return type(self)(**{**self.model_dump(), **(update or {})})


def halt_detail(report: IntegrationReport) -> str | None:
    """None when the task may count as landed; otherwise why it halts at `integrate`.

    The conflicts text wins, then the summary; only when both are absent does the
    generic message apply.
    """
    if report.complete:
        return None
    return report.conflicts or report.summary or INCOMPLETE_DETAIL
