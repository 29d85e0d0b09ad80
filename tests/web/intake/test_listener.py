"""The intake's listening socket: in a directory only its user may enter,
and the directories of masters that died without cleaning up swept."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

from app.web.intake.listener import private_listener


def test_the_socket_lives_in_a_directory_only_its_user_may_enter() -> None:
    listener = private_listener()
    directory = Path(listener.directory)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert directory.stat().st_uid == os.getuid()
    assert Path(listener.path).parent == directory and Path(listener.path).is_socket()
    listener.close()
    assert not directory.exists()


def test_directories_of_dead_masters_are_swept_and_live_ones_kept() -> None:
    """A master killed with SIGKILL cannot remove its directory; the next one
    removes it, and leaves alone a live master's, a foreign name and a link."""
    # A short base: a Unix socket's path is limited to about 100 bytes.
    with tempfile.TemporaryDirectory() as base:
        sweeps_dead_keeps_live(Path(base))


def sweeps_dead_keeps_live(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    dead = tmp_path / f"odw-intake-{done.stdout.strip()}-abc"
    dead.mkdir()
    (dead / "intake.sock").write_text("")
    alive = tmp_path / f"odw-intake-{os.getpid()}-def"
    alive.mkdir()
    other = tmp_path / "odw-intake-notapid-x"
    other.mkdir()
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep").write_text("")
    (tmp_path / f"odw-intake-{done.stdout.strip()}-link").symlink_to(victim)
    listener = private_listener(str(tmp_path))
    assert not dead.exists()
    assert alive.is_dir() and other.is_dir() and (victim / "keep").exists()
    assert Path(listener.directory).parent == tmp_path
    assert Path(listener.directory).name.startswith(f"odw-intake-{os.getpid()}-")
    listener.close()
