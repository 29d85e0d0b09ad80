"""Per-gate retry budgets charged only when a failure makes no progress (seed 001).

A failure's fingerprint is a hash of its normalised reason. A gate is charged
only when the new fingerprint equals that gate's last one, so a run whose
failures keep moving is never penalised; a repeated failure drains the budget.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

_HEX = re.compile(r"\b[0-9a-f]{7,64}\b")
_TIMESTAMP = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?"
)
_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds|m|min)\b")
_LOCATION = re.compile(r"(?::\d+){1,2}\b|\bline \d+")
_TMP_PATH = re.compile(r"/tmp/[^\s:'\"]+")  # noqa: S108 (a pattern to mask, not a file)
_SPACE = re.compile(r"\s+")

GateDecision = Literal["retry", "exhausted"]


def normalise_reason(reason: str) -> str:
    """Lower-case; SHAs, timestamps, durations, line positions and temp paths masked.

    Those change between identical failures, so masking them keeps a repeated
    failure recognisable. Other numbers stay: "3 tests failed" becoming "1 test
    failed" is progress and must not be charged.
    """
    text = _TIMESTAMP.sub("<time>", reason.lower())
    text = _HEX.sub("<hex>", text)
    text = _DURATION.sub("<duration>", text)
    text = _LOCATION.sub("<at>", text)
    text = _TMP_PATH.sub("<tmp>", text)
    return _SPACE.sub(" ", text).strip()


def fingerprint(reason: str) -> str:
    return hashlib.sha256(normalise_reason(reason).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Ledger:
    """One gate's memory within one stage: last fingerprint, charges spent, and
    whether the gate judge already reset it once (only the review gate has one)."""

    fingerprint: str | None = None
    charges: int = 0
    reset_used: bool = False


@dataclass(frozen=True)
class Charge:
    decision: GateDecision
    charged: bool
    ledger: Ledger


def charge(ledger: Ledger, print_: str, budget: int) -> Charge:
    """Record one failure against a gate.

    Unchanged fingerprint: charge one unit, or report exhaustion when the budget
    is spent (a gate is never charged past its budget). Changed fingerprint:
    progress, so no charge.
    """
    if ledger.fingerprint != print_:
        return Charge("retry", False, Ledger(print_, ledger.charges, ledger.reset_used))
    if ledger.charges >= budget:
        return Charge("exhausted", False, ledger)
    return Charge("retry", True, Ledger(print_, ledger.charges + 1, ledger.reset_used))
