"""Whether a process still runs: the one check behind stale leases and stale worktrees.

Only processes on this host can be checked; a holder elsewhere is judged by its
lease's expiry instead.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable

HOST = socket.gethostname()


def pid_alive(pid: int) -> bool:
    """True while `pid` exists on this host (one we may not signal counts as alive)."""
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_alive(host: str, pid: int) -> bool:
    """True when `pid` runs on `host` and `host` is this one; False otherwise."""
    return host == HOST and pid_alive(pid)


def owner_alive(owner: str, alive: Callable[[str, int], bool] = process_alive) -> bool:
    """Whether the process named by a lease owner `host:pid:...` (a delivery
    worker's or an executor's) may still run: False only for a process of this
    host that is gone; an owner of another shape is taken as alive."""
    host, _, rest = owner.partition(":")
    pid = rest.partition(":")[0]
    return not pid.isdigit() or alive(host, int(pid))
