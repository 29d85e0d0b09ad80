"""The intake's listening socket: bound by the `odw serve` master in a
directory only its user can enter, and handed down to each intake process it
starts, so a restarted intake takes over the same socket and connections made
meanwhile wait in its backlog."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from app.liveness import pid_alive

PREFIX = "odw-intake-"


@dataclass
class PrivateListener:
    """A listening Unix socket in a fresh directory only this user may enter:
    whoever can connect can store deliveries."""

    sock: socket.socket
    path: str
    directory: str

    def close(self) -> None:
        self.sock.close()
        shutil.rmtree(self.directory, ignore_errors=True)


def private_listener(base: str | None = None) -> PrivateListener:
    """Bound in `$TMPDIR/odw-intake-<pid>-*` (or under `base`), after
    removing the directories left by masters that died without cleaning up."""
    parent = Path(base or tempfile.gettempdir())
    sweep_dead_listeners(parent)
    directory = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent)  # mode 0700
    path = str(Path(directory) / "intake.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(path)
    sock.listen(1024)
    return PrivateListener(sock, path, directory)


def sweep_dead_listeners(parent: Path) -> None:
    """Remove this user's listener directories whose master is gone (killed
    with SIGKILL, say): real directories only, never through a link."""
    for entry in parent.glob(f"{PREFIX}*-*"):
        pid = entry.name[len(PREFIX) :].split("-", 1)[0]
        if not pid.isdigit() or pid_alive(int(pid)):
            continue
        try:
            info = entry.lstat()
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid():
            shutil.rmtree(entry, ignore_errors=True)
