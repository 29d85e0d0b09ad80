"""Who may command ODW: the author screen and the collaborator-permission check.

The App's own comments and bots not in `allowedBots` are ignored without a
word (answering a bot invites loops). Everyone else's permission is read
through the `Permissions` port, cached briefly so a comment with several
commands, or a burst of button clicks, costs one request.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from app.core.repo_config import RepoConfig
from app.github.errors import NotFound
from app.github.protocols import Permission

# GitHub's repository roles, lowest first; a custom role falls back to its base
# permission (`read`, `write`, `admin`).
LEVELS = ("none", "read", "triage", "write", "maintain", "admin")
CACHE_SECONDS = 60.0


def reaches(have: str, need: str) -> bool:
    rank = {name: i for i, name in enumerate(LEVELS)}
    return rank.get(have, 0) >= rank[need]


def is_bot(login: str, kind: str | None) -> bool:
    return kind == "Bot" or login.endswith("[bot]")


def ignored_author(login: str, kind: str | None, config: RepoConfig, app_login: str) -> str | None:
    """Why a comment's author is not heard at all, or None when the comment counts."""
    if login.lower() == app_login.lower():
        return "the App's own comment"
    if is_bot(login, kind) and login not in config.allowed_bots:
        return f"{login} is a bot not listed in allowedBots"
    return None


@dataclass(frozen=True)
class Decision:
    allowed: bool
    have: str
    need: str

    def refusal(self) -> str:
        """The refusal's words; the reply's footer names the commenter, once."""
        return (
            f"this account has `{self.have}` permission on this repository; this command needs "
            f"`{self.need}` or above (`commandPermission` in `.github/odw.yml`). Nothing was "
            "changed. Anyone who can read may use `/odw status` and `/odw help`, or ask a "
            f"maintainer with `{self.need}` access."
        )


def level_of(permission: Permission) -> str:
    return permission.role_name if permission.role_name in LEVELS else permission.permission


class PermissionCache:
    """Collaborator levels per (repository, login), kept `ttl` seconds; `lookup`
    asks GitHub (the repository's `Permissions` port) on a miss."""

    def __init__(
        self, *, ttl: float = CACHE_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._ttl = ttl
        self._clock = clock
        self._seen: dict[tuple[str, str], tuple[float, str]] = {}
        self._lock = threading.Lock()

    def level(self, repo: str, login: str, lookup: Callable[[str], Permission]) -> str:
        """The login's level; `none` when GitHub does not know it (404)."""
        key = (repo.lower(), login.lower())
        now = self._clock()
        with self._lock:
            hit = self._seen.get(key)
        if hit is not None and now - hit[0] < self._ttl:
            return hit[1]
        try:
            found = level_of(lookup(login))
        except NotFound:
            found = "none"
        with self._lock:
            self._seen[key] = (now, found)
        return found

    def check(
        self, repo: str, login: str, need: str, lookup: Callable[[str], Permission]
    ) -> Decision:
        have = self.level(repo, login, lookup)
        return Decision(reaches(have, need), have, need)
