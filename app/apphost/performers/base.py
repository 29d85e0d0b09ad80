"""What every performer shares: the host's store, GitHub, clock and leases, and
the shape a performer has.

A performer does one kind of outbox entry, given the entry's typed effect;
`again` says the entry was claimed before (its first try may have reached
GitHub). `gave_up` is told when the executor stops retrying, so whoever waits
for the effect's answer hears why instead of waiting forever.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, TypeVar

from app.apphost.adapters import app_repo, git_url
from app.apphost.dispatched import tag_key
from app.apphost.runs import RunKey
from app.github import GitHubApp
from app.github.client import RepositoryClient
from app.gitops.evidence.repo import LocalRepo
from app.gitops.lock import LeaseMergeLock
from app.renewal import renewing
from app.store import Hold, Store

LEASE_SECONDS = 120.0

E_contra = TypeVar("E_contra", contravariant=True)


class Busy(RuntimeError):
    """Another executor holds what this entry needs; it is retried shortly."""


@dataclass(frozen=True)
class HostConfig:
    data_dir: Path
    bot_login: str = "odw[bot]"
    details_url: str | None = None
    retry_base_seconds: float = 2.0
    lease_seconds: float = LEASE_SECONDS


@dataclass
class HostContext:
    """The App host's shared pieces, one per executor."""

    store: Store
    github: GitHubApp
    config: HostConfig
    clock: Callable[[], datetime]
    owner: str = field(
        default_factory=lambda: (
            f"{socket.gethostname()}:{os.getpid()}:executor:{uuid.uuid4().hex[:8]}"
        )
    )
    wake: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.lock = LeaseMergeLock(self.store.leases, self.owner)
        # Run names show a keyed hash of each attempt's token, keyed by the App's own key.
        self.tag_key = tag_key(self.github.context.credentials.private_key)

    def client(self, key: RunKey) -> RepositoryClient:
        return self.github.repository(key.installation, key.repository)

    def run_dir(self, run_id: str) -> Path:
        return self.config.data_dir / "runs" / run_id

    def url(self, key: RunKey) -> str:
        return git_url(self.github.context.api_url, key.repository)

    def clone(self, key: RunKey) -> LocalRepo:
        """The App's bare clone of the repository, authenticated to push."""
        token = self.client(key).git_token(write=True)
        return app_repo(self.config.data_dir, key.installation, key.repository,
                        self.url(key), token)  # fmt: skip

    @contextmanager
    def holding(self, lease: str, busy: str) -> Iterator[Hold]:
        """Hold `lease` for one piece of work, renewed while it runs: each hold is
        its own owner, so two threads of this executor exclude each other; busy
        -> retried later. The `Hold` fences the work's writes (`Leases.fence`)."""
        owner = f"{self.owner}:{uuid.uuid4().hex[:8]}"
        ttl = self.config.lease_seconds
        hold = self.store.leases.acquire(lease, owner, ttl)
        if hold is None:
            raise Busy(busy)
        try:
            with renewing(lambda: self.store.leases.renew(hold, ttl), ttl / 3, f"lease {lease}"):
                yield hold
        finally:
            self.store.leases.release(lease, owner)


class Performer(Protocol[E_contra]):
    def perform(self, effect: E_contra, *, again: bool) -> Any:
        """Do the effect; what is returned is stored as the entry's result."""

    def gave_up(self, effect: E_contra, error: str) -> None:
        """The executor stopped retrying the effect (`error` is the last failure)."""
