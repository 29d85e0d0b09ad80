"""The merge lock: one integration per repository and base at a time.

The port is one method, `hold(key, timeout)`, a context manager that raises
`LockTimeout` when the key stays busy. Adapters: `InProcessMergeLock` (threads of
one process), `FileMergeLock` (processes sharing a data directory) and
`LeaseMergeLock` (processes on any host sharing the store's leases). Every
adapter passes the same contract tests (`tests/gitops/test_merge_lock.py`).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from app.gitops.digest import sha256_hex
from app.gitops.flock import lock_file, unlock_file

# The ports below are `Protocol`s for the type checker only: at run time they are
# plain classes, so `odw integrate` (once per landing) does not import `typing`.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol
else:
    Protocol = object


class LockTimeout(TimeoutError):
    """The key was still held by someone else when the timeout passed."""

    def __init__(self, key: str, timeout: float, holder: str | None = None) -> None:
        by = f" (held by {holder})" if holder else ""
        super().__init__(f"merge lock {key!r} still busy after {timeout:g} s{by}")
        self.key = key
        self.timeout = timeout
        self.holder = holder


class MergeLock(Protocol):
    def hold(self, key: str, timeout: float) -> AbstractContextManager[None]:
        """Hold `key` exclusively for the `with` block; LockTimeout after `timeout` s."""


def lock_key(repo: str, base: str) -> str:
    """The key integrations of `base` in `repo` serialise on (`r`, `r/` and `r.git` alike)."""
    return f"{repo.rstrip('/').removesuffix('.git')}#{base}"


class InProcessMergeLock:
    """Threads of one process; not reentrant (a second hold by the same thread waits)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def _lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    @contextmanager
    def hold(self, key: str, timeout: float) -> Iterator[None]:
        lock = self._lock(key)
        if not lock.acquire(timeout=max(timeout, 0.0)):
            raise LockTimeout(key, timeout)
        try:
            yield
        finally:
            lock.release()


_UNSAFE = re.compile(r"[^0-9A-Za-z._-]+")


class FileMergeLock:
    """OS file locks under `directory`: processes and threads on one host.

    The OS drops the lock when its holder dies, so a crashed integration never
    leaves the key stuck.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def path_for(self, key: str) -> Path:
        digest = sha256_hex(key)[:16]
        readable = _UNSAFE.sub("-", key)[-60:].strip("-.")
        return self.directory / f"{readable}-{digest}.lock"

    @contextmanager
    def hold(self, key: str, timeout: float) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        # A descriptor per hold: two threads of one process exclude each other
        # like two processes do.
        try:
            fd = lock_file(self.path_for(key), timeout)
        except TimeoutError:
            raise LockTimeout(key, timeout) from None
        try:
            yield
        finally:
            unlock_file(fd)


class LeaseTable(Protocol):
    """The part of the store's `Leases` the lease lock needs (named, expiring owners)."""

    def acquire(self, name: str, owner: str, ttl: float) -> object | None: ...

    def heartbeat(self, name: str, owner: str, ttl: float) -> bool: ...

    def release(self, name: str, owner: str) -> bool: ...

    def holder(self, name: str) -> _Owned | None: ...


class _Owned(Protocol):
    @property
    def owner(self) -> str: ...


class LeaseMergeLock:
    """Leases in the store: processes on any host (the App scaled out).

    Each hold is its own lease owner (`<owner>:<random>`), so two holds through
    one instance exclude each other like two processes do. The lease is
    heartbeated while held; a crashed holder's lock frees itself after `ttl`.
    """

    def __init__(
        self,
        leases: LeaseTable,
        owner: str,
        *,
        ttl: float = 60.0,
        poll: float = 0.05,
        prefix: str = "merge:",
    ) -> None:
        self.leases = leases
        self.owner = owner
        self.ttl = ttl
        self.poll = poll
        self.prefix = prefix

    @contextmanager
    def hold(self, key: str, timeout: float) -> Iterator[None]:
        name = self.prefix + key
        holder = f"{self.owner}:{os.urandom(6).hex()}"
        deadline = time.monotonic() + max(timeout, 0.0)
        while not self.leases.acquire(name, holder, self.ttl):
            left = deadline - time.monotonic()
            if left <= 0:
                current = self.leases.holder(name)
                raise LockTimeout(key, timeout, current.owner if current else None)
            time.sleep(min(self.poll, left))
        from app.renewal import renewing  # the App's path; `odw integrate` never loads it

        try:
            with renewing(
                lambda: self.leases.heartbeat(name, holder, self.ttl), self.ttl / 3, f"lock {name}"
            ):
                yield
        finally:
            self.leases.release(name, holder)
