"""The auth preflight's answer: what the run's credentials cannot do.

A host checks, before a run dispatches anything, that its credentials can do
what the run will need (read the base, push task branches and, in App mode,
create check runs and dispatch the stage workflow), and hands the core what is
missing. A run with anything missing fails closed: the core records recovery
as blocked (`auth-preflight-failed: ...`) and stops with an `auth` halt that
names what to grant, so nothing is dispatched.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

BLOCKED = "auth-preflight-failed"


class Missing(BaseModel):
    """One thing the run could not do, and the grant that allows it, or (`fix`)
    what else a person must do first (commit the stage workflow where GitHub
    looks for it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    permission: str  # e.g. "contents"
    level: str  # "read" | "write"
    needed_for: str  # e.g. "push task branches"
    detail: str = ""  # what the check saw (an HTTP status, git's message)
    fix: str = ""  # not a grant: what to do instead, in a sentence

    def grant(self) -> str:
        return self.fix or f"{self.permission}: {self.level} ({self.needed_for})"


class Preflight(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    checked: list[str] = Field(default_factory=list)
    missing: list[Missing] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.missing

    def blocked(self) -> str:
        """The recovery object's `blocked` value for a failed preflight."""
        return f"{BLOCKED}: " + "; ".join(m.grant() for m in self.missing)

    def halt(self) -> str:
        """The run's `halted` reason: what failed, what to grant and what to fix."""
        details = "; ".join(f"{m.needed_for}: {m.detail}" for m in self.missing if m.detail)
        grants = ", ".join(m.grant() for m in self.missing if not m.fix)
        todo = ([f"grant {grants}"] if grants else []) + [m.fix for m in self.missing if m.fix]
        text = "auth preflight failed, nothing was dispatched: " + "; ".join(todo)
        return text + (f" ({details})" if details else "")
