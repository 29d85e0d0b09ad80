"""Exclusive OS file locks (`flock`), polled until a deadline.

All the merge lock and the mirror lock need from a lock file, in the standard
library: importing a lock library cost each `odw integrate` process more than
the lock calls of its whole landing. The OS drops a lock when its holder dies,
and each hold opens its own descriptor, so two holds in one process exclude
each other like two processes do.
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

POLL_INTERVAL = 0.02


def lock_file(path: Path, timeout: float, poll: float = POLL_INTERVAL) -> int:
    """Lock `path` (created if missing) exclusively; the descriptor to pass to `unlock_file`.

    Raises TimeoutError when someone else still holds it after `timeout` seconds
    (0: one try).
    """
    deadline = time.monotonic() + max(timeout, 0.0)
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"{path} is locked by another holder") from None
            time.sleep(min(poll, left))
            continue
        except BaseException:
            os.close(fd)
            raise
        if os.fstat(fd).st_nlink == 0:  # removed while we waited: lock the new file
            os.close(fd)
            continue
        return fd


def unlock_file(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
