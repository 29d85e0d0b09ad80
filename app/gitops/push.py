"""Pushing the squash commit and telling a race from a refusal.

A non-fast-forward rejection means someone else moved the base first: fetch and
try again. A rejection by the remote itself (a protected-branch hook, missing
permission) is a decision, not a race: stop and report the remote's words.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from pathlib import Path

from app.gitops.runner import GitRunner


class PushStatus(Enum):
    PUSHED = "pushed"
    RACE = "race"  # non-fast-forward: the base moved under us
    REFUSED = "refused"  # the remote said no (hook, protection, permission)
    FAILED = "failed"  # transport, auth or anything else without a ref status


class PushOutcome:
    """How a push ended and the words that say so (a plain class: no dataclass import
    on `odw integrate`'s path)."""

    __slots__ = ("message", "status")

    def __init__(self, status: PushStatus, message: str) -> None:
        self.status = status
        self.message = message

    def __repr__(self) -> str:
        return f"PushOutcome({self.status!r}, {self.message!r})"


_RACE_MARKERS = ("non-fast-forward", "fetch first", "stale info")
# A concurrent update that won the ref while the remote was updating it: still a race.
_LOST_UPDATE_MARKERS = ("cannot lock ref", "but expected", "incorrect old value")


def push_head(
    runner: GitRunner,
    cwd: Path,
    base: str,
    push_options: Sequence[str] = (),
    *,
    source: str = "HEAD",
) -> PushOutcome:
    """`git push --porcelain origin <source>:refs/heads/<base>` (never forced), classified."""
    args = ["push", "--porcelain", "--no-verify"]
    for option in push_options:
        args += ["--push-option", option]
    args += ["origin", f"{source}:refs/heads/{base}"]
    result = runner.run(*args, cwd=cwd, check=False)
    status_line = _ref_status(result.stdout, base)
    remote_says = _remote_lines(result.stderr)
    if status_line is not None:
        flag, summary = status_line
        if flag != "!" and result.returncode == 0:
            return PushOutcome(PushStatus.PUSHED, summary)
        if flag == "!" and "[rejected]" in summary and any(m in summary for m in _RACE_MARKERS):
            return PushOutcome(PushStatus.RACE, summary)
        said = " ".join([summary, *remote_says])
        if flag == "!" and any(m in said for m in _LOST_UPDATE_MARKERS):
            # The remote accepted our push but another update won the ref first.
            return PushOutcome(PushStatus.RACE, f"{summary}: {'; '.join(remote_says)}")
        if flag == "!":
            words = "; ".join(remote_says) if remote_says else summary
            return PushOutcome(PushStatus.REFUSED, f"{summary}: {words}" if remote_says else words)
    tail = [ln for ln in result.stderr.strip().splitlines() if ln.strip()]
    detail = "; ".join(remote_says or tail[-3:]) or f"git push exited {result.returncode}"
    return PushOutcome(PushStatus.FAILED, detail)


def _ref_status(stdout: str, base: str) -> tuple[str, str] | None:
    """The porcelain line for our ref: `<flag>\\t<from>:<to>\\t<summary>`."""
    for line in stdout.splitlines():
        parts = line.split("\t")
        if len(parts) >= 3 and parts[1].endswith(f":refs/heads/{base}"):
            return parts[0], parts[2].strip()
    return None


def _remote_lines(stderr: str) -> list[str]:
    out = []
    for line in stderr.splitlines():
        if line.startswith("remote:"):
            text = line[len("remote:") :].strip()
            if text:
                out.append(text)
    return out
