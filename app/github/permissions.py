"""What each GitHub route ODW calls needs, and the App permissions that follow.

One table, `ROUTES`: every REST route `app/github` sends, with the App
permission and level GitHub requires for it (GitHub's "Permissions required
for GitHub Apps" reference). `required()` folds it, with git over HTTPS and
the subscribed events, into the least permission set; `app.yml` must equal it
(tests/github/test_permissions.py drives every port against the fake GitHub
and checks the routes it sent are exactly these).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

LEVELS = {"none": 0, "read": 1, "write": 2, "admin": 3}

R = "/repos/{owner}/{repo}"

# (method, path template) -> (permission, level)
ROUTES: dict[tuple[str, str], tuple[str, str]] = {
    ("GET", R + "/contents/{path}"): ("contents", "read"),
    ("GET", R + "/git/ref/{ref}"): ("contents", "read"),
    ("POST", R + "/git/refs"): ("contents", "write"),
    ("PATCH", R + "/git/refs/{ref}"): ("contents", "write"),
    ("DELETE", R + "/git/refs/{ref}"): ("contents", "write"),
    ("POST", R + "/check-runs"): ("checks", "write"),
    ("PATCH", R + "/check-runs/{check_run_id}"): ("checks", "write"),
    ("GET", R + "/commits/{ref}/check-runs"): ("checks", "read"),
    ("POST", R + "/issues/{issue_number}/comments"): ("issues", "write"),
    ("GET", R + "/issues/{issue_number}/comments"): ("issues", "read"),
    ("PATCH", R + "/issues/comments/{comment_id}"): ("issues", "write"),
    ("POST", R + "/issues/comments/{comment_id}/reactions"): ("issues", "write"),
    ("GET", R + "/collaborators/{username}/permission"): ("metadata", "read"),
    ("POST", R + "/pulls"): ("pull_requests", "write"),
    ("GET", R + "/pulls/{pull_number}"): ("pull_requests", "read"),
    ("GET", R + "/pulls"): ("pull_requests", "read"),
    ("PATCH", R + "/pulls/{pull_number}"): ("pull_requests", "write"),
    ("PUT", R + "/pulls/{pull_number}/merge"): ("contents", "write"),
    ("POST", R + "/actions/workflows/{workflow_id}/dispatches"): ("actions", "write"),
    ("GET", R + "/actions/runs/{run_id}"): ("actions", "read"),
    ("GET", R + "/actions/workflows/{workflow_id}/runs"): ("actions", "read"),
    ("GET", R + "/actions/runs/{run_id}/jobs"): ("actions", "read"),
    ("GET", R + "/actions/runs/{run_id}/artifacts"): ("actions", "read"),
    ("GET", R + "/actions/artifacts/{artifact_id}/{archive_format}"): ("actions", "read"),
}

# Used only when the installation holds the permission (granted beyond the
# manifest by an owner who wants it); without it the caller degrades:
# required status checks are read from branch protection (else the merge's
# answer says what is missing), commit statuses count beside check runs.
OPTIONAL_ROUTES: dict[tuple[str, str], tuple[str, str]] = {
    ("GET", R + "/branches/{branch}/protection/required_status_checks"): ("administration", "read"),
    ("GET", R + "/commits/{ref}/statuses"): ("statuses", "read"),
}

# Authenticated with the App JWT, not an installation token: no permission.
APP_ROUTES = frozenset(
    {
        ("POST", "/app/installations/{installation_id}/access_tokens"),
        ("GET", R + "/installation"),  # `make live-check` finds its installation
    }
)

# git over HTTPS with an installation token: the mirror fetches, the integrator
# pushes the base, the App creates task branches.
GIT: dict[str, tuple[str, str]] = {
    "fetch": ("contents", "read"),
    "push": ("contents", "write"),
}

# A subscribed event is delivered only while the App holds this permission.
EVENTS: dict[str, tuple[str, str]] = {
    "push": ("contents", "read"),
    "pull_request": ("pull_requests", "read"),
    "issue_comment": ("issues", "read"),
    "check_run": ("checks", "read"),
    "check_suite": ("checks", "read"),
    "workflow_run": ("actions", "read"),
    "workflow_job": ("actions", "read"),
}

# Routed, but delivered only with an optional permission (`status` wakes a
# landing waiting for commit statuses); not in `default_events`.
OPTIONAL_EVENTS: dict[str, tuple[str, str]] = {"status": ("statuses", "read")}

# Sent to every App without a subscription; never listed in `default_events`.
APP_EVENTS = frozenset({"installation", "installation_repositories", "ping"})

# Every App holds metadata: read; GitHub grants it whatever the manifest says.
ALWAYS = {"metadata": "read"}


def fold(grants: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The highest level asked for each permission."""
    held: dict[str, str] = {}
    for name, level in grants:
        if LEVELS[level] > LEVELS[held.get(name, "none")]:
            held[name] = level
    return held


def required(events: Iterable[str] = EVENTS) -> dict[str, str]:
    """The least permissions for every route, git operation and the `events`."""
    unknown = sorted(set(events) - set(EVENTS) - APP_EVENTS - set(OPTIONAL_EVENTS))
    if unknown:
        raise ValueError(f"no permission known for event(s) {', '.join(unknown)}")
    needs = [*ROUTES.values(), *GIT.values(), *ALWAYS.items()]
    needs += [EVENTS[e] for e in events if e in EVENTS]
    return fold(needs)


def missing(held: Mapping[str, str], needed: Mapping[str, str]) -> dict[str, str]:
    """The permissions in `needed` that `held` lacks or holds too low."""
    return {
        name: level
        for name, level in needed.items()
        if LEVELS.get(held.get(name, "none"), 0) < LEVELS[level]
    }
