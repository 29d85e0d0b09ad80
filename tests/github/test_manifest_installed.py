"""`odw app manifest` after a wheel install: the manifest ships with the package.

The project is built into a wheel and installed into a directory of its own
(no source tree beside it), and the installed `odw` is run from elsewhere.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.github.manifest import MANIFEST_PATH, load, manifest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
# What the build needs is the project; these are not part of it.
NOT_BUILT = (
    ".git",
    ".venv",
    ".*cache",
    "tests",
    "bench",
    "var",
    "build",
    "*.egg-info",
    "__pycache__",
)


def _pip(*args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", *args, "--quiet", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def _odw(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed odw only: PYTHONPATH puts the install before anything else."""
    return subprocess.run(
        [sys.executable, "-m", "app.cli.main", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "source"
    # A copy, so the build writes nothing into the working tree.
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*NOT_BUILT))
    _pip("wheel", "--no-deps", "-w", str(tmp / "dist"), str(source))
    (wheel,) = (tmp / "dist").glob("odw-*.whl")
    _pip("install", "--no-deps", "--no-index", "--target", str(tmp / "site"), str(wheel))
    return tmp / "site"


def test_the_root_app_yml_is_the_packaged_manifest() -> None:
    root = ROOT / "app.yml"
    assert root.exists(), "the repository root must have app.yml"
    assert root.resolve() == MANIFEST_PATH.resolve()


def test_an_installed_odw_prints_the_manifest(installed: Path, tmp_path: Path) -> None:
    located = subprocess.run(
        [sys.executable, "-c", "import app.github.manifest as m; print(m.MANIFEST_PATH)"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(installed)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert Path(located.stdout.strip()).is_relative_to(installed), located
    done = _odw(installed, tmp_path, "app", "manifest", "--url", "https://odw.example.org")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == manifest("https://odw.example.org", load())


def test_an_install_without_the_manifest_says_so_without_a_traceback(
    installed: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "site"
    shutil.copytree(installed, broken)
    (broken / "app" / "github" / "app.yml").unlink()
    done = _odw(broken, tmp_path, "app", "manifest", "--url", "https://odw.example.org")
    assert done.returncode != 0 and done.stdout == ""
    assert "app.yml is missing" in done.stderr and "reinstall" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
