"""What a protected base requires before a pull request may merge.

The required contexts come from branch protection when the installation may
read it (`administration: read`); otherwise they are unknown and the merge
answer (405 "required status check ... expected") says what is missing. A
head's check states combine check runs and commit statuses, by name.
"""

from __future__ import annotations

from app.github.errors import Forbidden, GitHubError, NotFound, Unprocessable
from app.github.transport import Transport

PROTECTION_PERMISSIONS = {"administration": "read"}
CHECK_PERMISSIONS = {"checks": "read"}
STATUS_PERMISSIONS = {"statuses": "read"}

# What a check run's conclusion or a commit status's state means for merging.
PASSING = frozenset({"success", "neutral", "skipped"})
FAILING = frozenset({"failure", "error", "cancelled", "timed_out", "action_required", "stale"})


class GitHubProtection:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def required_contexts(self, branch: str) -> list[str] | None:
        """The status checks `branch` requires; [] when none, None when unknown."""

        def read() -> list[str]:
            _, data = self._t.request(
                "GET", f"/branches/{branch}/protection/required_status_checks"
            )
            names = list(data.get("contexts") or [])
            names += [c["context"] for c in data.get("checks") or [] if c["context"] not in names]
            return names

        try:
            return self._t.call("protection.required_checks", read)
        except NotFound:
            return []  # no protection, or no required checks
        except (Forbidden, Unprocessable):
            return None  # the installation may not read protection


class GitHubCheckStates:
    """Check runs need `checks: read`; commit statuses `statuses: read`, which an
    installation may lack: then only check runs count."""

    def __init__(self, checks: Transport, statuses: Transport) -> None:
        self._checks = checks
        self._statuses = statuses

    def check_states(self, sha: str) -> dict[str, str]:
        """Each check run and commit status of `sha` by name (the newest wins):
        `success`, `pending` or `failure`."""

        def runs() -> dict[str, str]:
            states: dict[str, str] = {}
            for run in self._checks.paginate(f"/commits/{sha}/check-runs", "check_runs"):
                done = run["status"] == "completed"
                states.setdefault(run["name"], _state(run.get("conclusion")) if done else "pending")
            return states

        def statuses() -> dict[str, str]:
            states: dict[str, str] = {}
            for status in self._statuses.paginate(f"/commits/{sha}/statuses"):
                states.setdefault(status["context"], _state(status["state"]))
            return states

        states = self._checks.call("checks.states", runs)
        try:
            found = self._statuses.call("statuses.list", statuses)
        except GitHubError as exc:
            if exc.status not in (403, 422):
                raise
            found = {}
        for name, state in found.items():
            states.setdefault(name, state)
        return states


def _state(value: str | None) -> str:
    if value in PASSING:
        return "success"
    if value in FAILING:
        return "failure"
    return "pending"
