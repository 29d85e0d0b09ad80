"""`odw_argv`: a child runs ODW's code whatever its working directory and
environment hold (an inherited relative `PYTHONPATH` entry names the child's
directory, so a safe path alone would not do)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from app import __version__
from app.python_child import odw_argv
from tests.hostile_modules import plant


def test_a_child_in_a_hostile_directory_with_a_relative_pythonpath_runs_odw(
    tmp_path: Path,
) -> None:
    here, markers = tmp_path / "here", tmp_path / "imported"
    here.mkdir()
    markers.mkdir()
    plant(here, markers)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([".", "", "app"])}
    proc = subprocess.run(
        odw_argv("--version"), cwd=here, env=env, capture_output=True, text=True, timeout=60
    )
    assert (proc.returncode, proc.stdout) == (0, f"odw {__version__}\n"), proc.stderr
    assert list(markers.iterdir()) == []
