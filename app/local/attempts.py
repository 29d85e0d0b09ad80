"""Records of running stage attempts, so a run that died can clean up after itself.

Before an attempt starts, a small JSON file under the run directory names its
token, its worktree and (once spawned) the runner's pid. Every process the
attempt starts (the `odw stage` runner, the agent, its children, the gates)
inherits `ODW_LOCAL_ATTEMPT=<token>` in its environment. After a crash the
rerun reads the records of the attempts the log still calls live and kills
exactly the processes carrying that tag (on Linux, found through /proc); where
/proc is missing it falls back to the runner's process group.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from app.core.naming import slug

TAG_VAR = "ODW_LOCAL_ATTEMPT"
PROC = Path("/proc")


@dataclass(frozen=True)
class AttemptRecord:
    key: str
    task: str
    stage: str
    token: str
    worktree: str | None = None
    pid: int | None = None


class AttemptFiles:
    """One file per live attempt under `<run dir>/attempts/`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def path(self, key: str) -> Path:
        return self.directory / (slug(key.replace("/", "_")) + ".json")

    def write(self, record: AttemptRecord) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.path(record.key)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(record)), "utf-8")
        tmp.replace(path)

    def update(self, key: str, **changes: object) -> None:
        current = self.read(key)
        if current is not None:
            self.write(replace(current, **changes))  # type: ignore[arg-type]

    def read(self, key: str) -> AttemptRecord | None:
        try:
            data = json.loads(self.path(key).read_text("utf-8"))
            return AttemptRecord(**data)
        except (OSError, ValueError, TypeError):
            return None

    def remove(self, key: str) -> None:
        self.path(key).unlink(missing_ok=True)


def tagged_processes(token: str) -> list[int]:
    """Pids whose environment carries this attempt's tag (Linux /proc)."""
    needle = f"{TAG_VAR}={token}".encode()
    me = os.getpid()
    found = []
    for entry in PROC.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        with contextlib.suppress(OSError):
            env = (entry / "environ").read_bytes()
            if needle in env.split(b"\0"):
                found.append(int(entry.name))
    return found


def kill_attempt(record: AttemptRecord, *, settle: float = 5.0) -> int:
    """SIGKILL everything the attempt started; returns how many processes were found."""
    if PROC.is_dir():
        victims = tagged_processes(record.token)
        found = len(victims)
        for pid in victims:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + settle
        while victims and time.monotonic() < deadline:
            victims = [p for p in victims if (PROC / str(p)).exists() and not _zombie(p)]
            time.sleep(0.05)
        return found
    if record.pid is None:
        return 0
    try:
        os.killpg(record.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return 0
    return 1


def _zombie(pid: int) -> bool:
    try:
        stat = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] == "Z"
