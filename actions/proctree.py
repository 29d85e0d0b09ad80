"""Run a command in its own process group under a deadline; leave nothing behind.

On expiry the whole tree gets SIGTERM, then SIGKILL after a grace period
(seed 004: exit 124 for a timeout, 125 when cleanup itself failed, after a
clean exit too). The tree is the process group plus every descendant found
through /proc, so a grandchild that moved to its own session is still found;
with `enable_subreaper()` even orphans whose parent already died stay ours to
find; and everything in the attempt's containment (`actions/containment.py`:
its cgroup, its environment tag), so a daemon re-forking into new sessions is
found too.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from actions.containment import Containment, Preference
from app.core.verdict import EXIT_CLEANUP_FAILED, EXIT_TIMEOUT

_PR_SET_CHILD_SUBREAPER = 36
_READ_SIZE = 1 << 16
_POLL = 0.05
_SETTLE = 0.01
KILL_WAIT = 5.0


@dataclass
class ProcessResult:
    """What happened to one command, as evidence."""

    exit_code: int
    timed_out: bool = False
    cleanup_failed: bool = False
    spawn_error: str | None = None
    signal: int | None = None
    duration: float = 0.0
    signals_sent: list[str] = field(default_factory=list)
    survivors: list[int] = field(default_factory=list)
    stragglers: int = 0
    containment: str = "sweep"


_subreaper = False


def enable_subreaper() -> bool:
    """Make orphaned descendants re-parent to this process (Linux only).

    Only for a process that runs one tree at a time (`odw stage`): every child
    it has is then part of the tree being run.
    """
    global _subreaper
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper = bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        _subreaper = False
    return _subreaper


def _proc_table() -> dict[int, tuple[int, int, str]]:
    """pid -> (ppid, pgid, state) for every visible process."""
    table: dict[int, tuple[int, int, str]] = {}
    try:
        names = [p.name for p in Path("/proc").iterdir()]
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            raw = Path(f"/proc/{name}/stat").read_bytes()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: split after the last ')'.
        rest = raw[raw.rfind(b")") + 2 :].split()
        if len(rest) < 3:
            continue
        table[int(name)] = (int(rest[1]), int(rest[2]), rest[0].decode())
    return table


def _live(table: dict[int, tuple[int, int, str]], pid: int) -> bool:
    return pid in table and table[pid][2] not in ("Z", "X")


def tree_members(root: int, pgid: int, known: set[int] | None = None) -> list[int]:
    """Live processes in the group of `root`, descending from it, or seen in it before.

    `known` carries members across calls, so a grandchild that left the group
    and lost its parent to SIGTERM is still killed; it is updated in place.
    """
    table = _proc_table()
    me = os.getpid()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found = {pid for pid, (_, group, _) in table.items() if group == pgid}
    stack = [root]
    if _subreaper:
        # Orphans re-parented to us belong to the tree we started.
        stack += [p for p in children.get(me, ()) if p != root]
    while stack:
        pid = stack.pop()
        if pid in table and pid not in found and pid != me:
            found.add(pid)
        stack.extend(c for c in children.get(pid, ()) if c not in found)
    if known is not None:
        found |= known
    found.discard(me)
    live = sorted(p for p in found if _live(table, p))
    if known is not None:
        known.update(live)
    return live


def _reap_orphans(root: int) -> None:
    """Collect exit statuses of orphans re-parented to us, never of `root` (Popen's)."""
    me = os.getpid()
    for pid, (ppid, _, state) in _proc_table().items():
        if ppid == me and pid != root and state in ("Z", "X"):
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)


def _send(pgid: int, pids: Iterable[int], sig: signal.Signals, box: Containment) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
    box.send(pids, sig)


def _find(proc: subprocess.Popen[bytes], known: set[int], box: Containment) -> list[int]:
    """Everything of the attempt still alive: its tree and its containment."""
    return sorted({*tree_members(proc.pid, proc.pid, known), *box.members()})


def _settled(proc: subprocess.Popen[bytes], known: set[int], box: Containment) -> list[int]:
    """Members now; empty only when two sweeps in a row found none (a fork in flight)."""
    members = _find(proc, known, box)
    if members:
        return members
    time.sleep(_SETTLE)
    proc.poll()
    _reap_orphans(proc.pid)
    return _find(proc, known, box)


def terminate_tree(
    proc: subprocess.Popen[bytes],
    grace: float,
    kill_wait: float = KILL_WAIT,
    box: Containment | None = None,
) -> tuple[list[str], list[int], int]:
    """SIGTERM the tree, SIGKILL what is left after `grace`; returns (signals,
    survivors, how many processes were signalled).

    Sweeps repeat until none finds a member: a process forked between a sweep
    and its signal is found by the next one, so the count holds every process
    a re-forking daemon left, where one sweep can land between its generations.
    """
    box = box or Containment(tag="", cgroup=None)
    sent: list[str] = []
    pgid = proc.pid
    known: set[int] = set()
    members = _settled(proc, known, box)
    if not members:
        return sent, [], 0
    signalled = set(members)
    _send(pgid, members, signal.SIGTERM, box)
    sent.append("SIGTERM")
    end = time.monotonic() + grace
    while time.monotonic() < end:
        proc.poll()
        _reap_orphans(proc.pid)
        members = _settled(proc, known, box)
        if not members:
            return sent, [], len(signalled)
        fresh = [p for p in members if p not in signalled]
        if fresh:  # forked after the first SIGTERM
            signalled.update(fresh)
            _send(pgid, fresh, signal.SIGTERM, box)
        time.sleep(_POLL)
    sent.append("SIGKILL")
    end = time.monotonic() + kill_wait
    while True:
        members = _find(proc, known, box)
        signalled.update(members)
        _send(pgid, members, signal.SIGKILL, box)
        proc.poll()
        _reap_orphans(proc.pid)
        members = _settled(proc, known, box)
        if not members or time.monotonic() >= end:
            return sent, members, len(signalled)
        time.sleep(_POLL)


def run_process(
    argv: list[str],
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    stdin_path: Path | None = None,
    deadline: float,
    grace: float = 10.0,
    on_output: Callable[[bytes], None] | None = None,
    containment: Preference = "auto",
    kill_wait: float = KILL_WAIT,
) -> ProcessResult:
    """Run `argv` with stdout+stderr streamed to `on_output`, bounded by `deadline`."""
    start = time.monotonic()
    end = start + deadline
    box = Containment.open(containment)
    stdin = stdin_path.open("rb") if stdin_path is not None else subprocess.DEVNULL
    try:
        proc = box.start(
            argv,
            cwd=cwd,
            env=env,
            stdin=stdin,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        box.close()
        return ProcessResult(exit_code=127, spawn_error=f"{argv[0]}: {exc.strerror or exc}")
    finally:
        if not isinstance(stdin, int):
            stdin.close()
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    timed_out = False
    eof = False
    try:
        while not eof:
            remaining = end - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([fd], [], [], min(remaining, 0.2))
            if ready:
                chunk = os.read(fd, _READ_SIZE)
                if not chunk:
                    eof = True
                elif on_output is not None:
                    on_output(chunk)
            elif proc.poll() is not None:
                break  # leader gone; descendants still hold the pipe
        if eof and not timed_out:
            try:
                proc.wait(timeout=max(0.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                timed_out = True
        # Whatever is still running now is either past the deadline or a straggler
        # the agent left behind; neither may outlive the stage.
        sent, survivors, signalled = terminate_tree(
            proc, grace if timed_out else min(grace, 1.0), kill_wait, box
        )
        stragglers = 0 if timed_out else signalled
        _drain(fd, on_output)
        try:
            code = proc.wait(timeout=kill_wait)
        except subprocess.TimeoutExpired:
            code = None
            survivors = sorted({*survivors, proc.pid})
    finally:
        proc.stdout.close()
        released = _release(box, proc.pid)
        if not released and not survivors:
            survivors = sorted(box.members())
    result = ProcessResult(
        exit_code=0,
        timed_out=timed_out,
        signals_sent=sent,
        survivors=survivors,
        stragglers=stragglers,
        duration=time.monotonic() - start,
        containment=box.kind,
    )
    if survivors or not released:
        result.cleanup_failed = True
        result.exit_code = EXIT_CLEANUP_FAILED
    elif timed_out:
        result.exit_code = EXIT_TIMEOUT
    elif code is not None and code < 0:
        result.signal = -code
        result.exit_code = 128 - code
    else:
        result.exit_code = code if code is not None else EXIT_CLEANUP_FAILED
    return result


def _release(box: Containment, root: int, wait: float = 1.0) -> bool:
    """Remove the attempt's cgroup, giving exited members a moment to be reaped."""
    end = time.monotonic() + wait
    while not box.close():
        if time.monotonic() >= end:
            return False
        _reap_orphans(root)
        time.sleep(_POLL)
    return True


def _drain(fd: int, on_output: Callable[[bytes], None] | None, limit: float = 2.0) -> None:
    """Read what the killed tree left in the pipe, without waiting on a live writer."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if not ready:
            return
        try:
            chunk = os.read(fd, _READ_SIZE)
        except OSError:
            return
        if not chunk:
            return
        if on_output is not None:
            on_output(chunk)
