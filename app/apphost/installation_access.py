"""The App's auth preflight: before a run dispatches anything, can this
installation read the base, push task branches, create check runs and
dispatch the stage workflow in this repository?

Each need is asked of GitHub itself: an installation token narrowed to the
repository and to that one permission is minted (GitHub refuses with 422 a
permission the installation was not granted). These are the very tokens the
ports use afterwards (one cache, keyed by permission set), so the check costs
no request a run would not make anyway.
"""

from __future__ import annotations

from app.core.preflight import Missing, Preflight
from app.github.client import RepositoryClient
from app.github.errors import GitHubError

NEEDS: tuple[tuple[str, str, str], ...] = (
    ("contents", "read", "read the base"),
    ("contents", "write", "push task branches"),
    ("checks", "write", "create check runs"),
    ("actions", "write", "dispatch the stage workflow"),
)


def check(client: RepositoryClient) -> Preflight:
    missing = []
    for permission, level, why in NEEDS:
        try:
            client.authorise({permission: level})
        except GitHubError as exc:
            missing.append(
                Missing(permission=permission, level=level, needed_for=why, detail=str(exc)[:300])
            )
    return Preflight(checked=[why for _, _, why in NEEDS], missing=missing)
