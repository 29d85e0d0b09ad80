"""Where one attempt's processes live, so that cleanup finds every one of them.

A process group is not enough: a daemon that forks into a new session every
few milliseconds leaves the group and its parent at once. So each attempt is
contained twice over:

- a cgroup v2 of its own when this process may create one (root in a container,
  a delegated subtree): every descendant is in it whatever its session or
  parent, and `cgroup.kill` ends them all at once, forks in flight included;
- an environment tag (`ODW_ATTEMPT_TAG`) every descendant inherits, swept
  through /proc until a sweep finds none; the only containment without a cgroup.

Both add to what the process tree shows (group, descendants, orphans
re-parented to a subreaper). An agent running as root can still leave a cgroup
and scrub its environment: run agents as an unprivileged user.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

TAG_VAR = "ODW_ATTEMPT_TAG"
Kind = Literal["cgroup", "sweep"]
Preference = Literal["auto", "cgroup", "sweep"]
# The child stops itself before the real command starts, so the parent can move
# it into the cgroup before it can fork; `exec` keeps the pid.
_GATE = 'kill -STOP "$$" && exec "$@"'
_GATE_WAIT = 5.0


class ContainmentError(Exception):
    """A cgroup was demanded and cannot be made here."""


def _cgroup_mount() -> Path | None:
    """Where the cgroup v2 hierarchy is mounted, as this process sees it."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        left, _, right = line.partition(" - ")
        fields = left.split()
        if right.split()[:1] == ["cgroup2"] and len(fields) > 4 and fields[3] == "/":
            return Path(fields[4])
    return None


def own_cgroup() -> Path | None:
    """This process's cgroup v2 directory when it may create cgroups under it."""
    mount = _cgroup_mount()
    if mount is None:
        return None
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    rel = next((line[3:] for line in lines if line.startswith("0::")), None)
    if rel is None:
        return None
    path = mount / rel.lstrip("/")
    if not (path / "cgroup.procs").is_file() or not os.access(path, os.W_OK):
        return None
    return path


def _state(pid: int) -> str:
    """The process's state letter now; "X" when it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return "X"
    return raw[raw.rfind(b")") + 2 :][:1].decode() or "X"


def _live(pid: int) -> bool:
    return _state(pid) not in ("Z", "X")


def _pids() -> set[int]:
    try:
        return {int(p.name) for p in Path("/proc").iterdir() if p.name.isdigit()}
    except OSError:
        return set()


def tagged(tag: str) -> list[int]:
    """Live processes whose environment carries `tag` (those this user may read).

    /proc is listed again after each pass until a listing shows no new pid, so
    a child forked while the sweep ran (its parent gone before it was read) is
    still examined: no tagged process alive at the end went unread.
    """
    needle = f"\0{TAG_VAR}={tag}\0".encode()
    me = os.getpid()
    seen: set[int] = set()
    found = []
    fresh = _pids()
    while fresh:
        seen |= fresh
        for pid in sorted(fresh):
            if pid == me:
                continue
            try:
                env = Path(f"/proc/{pid}/environ").read_bytes()
            except OSError:
                continue
            if needle in b"\0" + env + b"\0" and _live(pid):
                found.append(pid)
        fresh = _pids() - seen
    return sorted(p for p in found if _live(p))


class Containment:
    """One attempt's processes: started inside it, found, signalled, removed."""

    def __init__(self, tag: str, cgroup: Path | None) -> None:
        self.tag = tag
        self.cgroup = cgroup
        self.kind: Kind = "cgroup" if cgroup is not None else "sweep"

    @classmethod
    def open(cls, prefer: Preference = "auto") -> Containment:
        """A fresh tag, and a fresh cgroup unless `prefer` is "sweep" or none can be made."""
        tag = secrets.token_hex(8)
        if prefer == "sweep":
            return cls(tag, None)
        parent = own_cgroup()
        if parent is not None:
            path = parent / f"odw-{tag}"
            try:
                path.mkdir()
                return cls(tag, path)
            except OSError:
                pass
        if prefer == "cgroup":
            raise ContainmentError("no writable cgroup v2 for this process")
        return cls(tag, None)

    def env(self, base: Mapping[str, str] | None) -> dict[str, str]:
        return {**(os.environ if base is None else base), TAG_VAR: self.tag}

    def start(
        self, argv: Sequence[str], *, env: Mapping[str, str] | None, **popen: object
    ) -> subprocess.Popen[bytes]:
        """Popen `argv` inside the containment; raises OSError as Popen does."""
        if self.cgroup is None:
            return subprocess.Popen(list(argv), env=self.env(env), **popen)  # type: ignore[call-overload,no-any-return]
        if not _which(argv[0], env):
            # Report a missing program as Popen would, not as the gate's exit 127.
            raise FileNotFoundError(2, "No such file or directory", argv[0])
        proc: subprocess.Popen[bytes] = subprocess.Popen(  # type: ignore[call-overload]
            ["/bin/sh", "-c", _GATE, "odw-attempt", *argv], env=self.env(env), **popen
        )
        self._enter(proc)
        return proc

    def _enter(self, proc: subprocess.Popen[bytes]) -> None:
        """Move the stopped gate into the cgroup, then let it run the command."""
        assert self.cgroup is not None
        end = time.monotonic() + _GATE_WAIT
        while time.monotonic() < end and proc.poll() is None:
            try:
                raw = Path(f"/proc/{proc.pid}/stat").read_bytes()
            except OSError:
                break
            if raw[raw.rfind(b")") + 2 :][:1] == b"T":
                break
            time.sleep(0.001)
        try:
            (self.cgroup / "cgroup.procs").write_text(str(proc.pid))
        except OSError:
            self._remove()  # fall back to the tag; the child has not forked yet
            self.kind = "sweep"
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGCONT)

    def members(self) -> set[int]:
        """Live processes in the cgroup (and any cgroup below it) or carrying the tag."""
        found = set(tagged(self.tag))
        if self.cgroup is not None:
            for folder, _, _ in os.walk(self.cgroup):
                with contextlib.suppress(OSError):
                    pids = Path(folder, "cgroup.procs").read_text().split()
                    found.update(pid for pid in map(int, pids) if _live(pid))
        found.discard(os.getpid())
        return found

    def send(self, pids: Iterable[int], sig: signal.Signals) -> None:
        """`sig` to each pid; SIGKILL also goes to the whole cgroup at once."""
        if sig == signal.SIGKILL and self.cgroup is not None:
            with contextlib.suppress(OSError):
                (self.cgroup / "cgroup.kill").write_text("1")
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)

    def close(self) -> bool:
        """Remove the cgroup; False when something still lives in it."""
        return self._remove()

    def _remove(self) -> bool:
        if self.cgroup is None:
            return True
        folders = sorted((Path(f) for f, _, _ in os.walk(self.cgroup)), key=lambda p: -len(p.parts))
        try:
            for folder in folders:
                folder.rmdir()
        except OSError:
            return False
        self.cgroup = None
        return True


def _which(name: str, env: Mapping[str, str] | None) -> bool:
    """Whether `name` would start: an executable file, by path or on PATH."""
    path = (env if env is not None else os.environ).get("PATH", os.defpath)
    places = [Path(name)] if "/" in name else [Path(d or ".", name) for d in path.split(":")]
    return any(p.is_file() and os.access(p, os.X_OK) for p in places)
