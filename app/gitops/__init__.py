"""Git adapter: the runner, the mirror cache, the merge lock and squash integration."""

from app.gitops.integrate import integrate
from app.gitops.landing_job import IntegrationInputError
from app.gitops.lock import (
    FileMergeLock,
    InProcessMergeLock,
    LeaseMergeLock,
    LockTimeout,
    MergeLock,
    lock_key,
)

__all__ = [
    "FileMergeLock",
    "InProcessMergeLock",
    "IntegrationInputError",
    "LeaseMergeLock",
    "LockTimeout",
    "MergeLock",
    "integrate",
    "lock_key",
]
