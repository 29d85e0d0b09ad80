"""What the container image does, without a container: build the wheel from what
the Dockerfile copies, install it into a fresh virtualenv, and run the image's
entrypoint and health check from there, outside this checkout.

The image itself is not built here (no container daemon, no registry for its
base images); this covers what the build would install and run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.service.live import free_port, kill_group, request, wait_healthy
from tests.webhooks import oracle

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("wheel-install")]

DOCKERFILE = REPO_ROOT / "Dockerfile"
SECRET = "wheel-install-secret"
ADMIN = "wheel-install-admin"


def stages() -> list[list[str]]:
    """The Dockerfile's instructions per stage, continuation lines joined."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text())
    result: list[list[str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            result.append([])
        result[-1].append(line)
    return result


def instruction(stage: list[str], name: str) -> str:
    found = [line.split(None, 1)[1] for line in stage if line.split(None, 1)[0].upper() == name]
    assert len(found) == 1, f"the Dockerfile's last stage has {len(found)} {name}"
    return found[0]


def image_command(port: int) -> list[str]:
    """ENTRYPOINT + CMD of the final image, without tini, on a loopback port."""
    final = stages()[-1]
    argv = json.loads(instruction(final, "ENTRYPOINT")) + json.loads(instruction(final, "CMD"))
    assert argv[:2] == ["tini", "--"], argv
    argv = argv[2:]
    return [
        "127.0.0.1" if arg == "0.0.0.0" else str(port) if arg == "8000" else arg  # noqa: S104
        for arg in argv
    ]


def health_check(port: int) -> list[str]:
    final = stages()[-1]
    argv = json.loads(instruction(final, "HEALTHCHECK").split("CMD", 1)[1])
    return [arg.replace(":8000/", f":{port}/") for arg in argv]


@dataclass(frozen=True)
class Installed:
    venv: Path
    bin: Path


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel, built from exactly what the Dockerfile's build stage copies."""
    root = tmp_path_factory.mktemp("wheel")
    src = root / "src"
    src.mkdir()
    for line in stages()[0]:
        parts = line.split()
        if parts[0].upper() == "COPY":
            for name in parts[1:-1]:
                source = REPO_ROOT / name
                if source.is_dir():
                    shutil.copytree(
                        source, src / name, ignore=shutil.ignore_patterns("__pycache__")
                    )
                else:
                    shutil.copy2(source, src / name)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}
    wheels = root / "wheels"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    built = subprocess.run(
        [*pip, "wheel", "--no-deps", "--quiet", "--wheel-dir", str(wheels), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env=env,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    (wheel,) = wheels.glob("odw-*.whl")
    venv = root / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120, env=env)
    # The dependencies come from the package index pip is configured with here,
    # as they would for `pip install odw-*.whl` anywhere.
    done = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            str(wheel),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env=env,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return Installed(venv, venv / "bin")


def fresh_env(data_dir: Path) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("ODW_", "PYTHON", "VIRTUAL_ENV"))
    }
    env.update(ODW_WEBHOOK_SECRET=SECRET, ODW_DATA_DIR=str(data_dir), ODW_ADMIN_TOKEN=ADMIN)
    return env


@pytest.fixture
def serving(installed: Installed, tmp_path: Path) -> Iterator[tuple[int, subprocess.Popen[bytes]]]:
    port = free_port()
    argv = image_command(port)
    assert argv[0] == "odw"
    with (tmp_path / "serve.log").open("ab") as out:
        proc = subprocess.Popen(
            [str(installed.bin / "odw"), *argv[1:]],
            cwd=tmp_path,  # nothing of the checkout is importable from here
            env=fresh_env(tmp_path / "data"),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_healthy(port, proc, timeout=60)
        yield port, proc
    finally:
        kill_group(proc, signal.SIGTERM)


def test_the_installed_package_is_the_wheels_not_the_checkout(installed: Installed) -> None:
    proc = subprocess.run(
        [str(installed.bin / "python"), "-I", "-c", "import app, actions; print(app.__file__)"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=installed.venv,
    )
    assert Path(proc.stdout.strip()).is_relative_to(installed.venv)


def test_the_images_command_serves_and_acts_on_a_delivery(
    serving: tuple[int, subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    port, _ = serving
    delivery = str(uuid.uuid4())
    body, headers = oracle.signed(SECRET, "star", {"action": "created"}, delivery)
    assert request(port, "POST", "/webhooks", body, headers)[0] == 202
    # The SQLite database and its migrations (package data) came from the wheel.
    assert (tmp_path / "data" / "odw.sqlite3").is_file()
    deadline = time.monotonic() + 30
    status = None
    while time.monotonic() < deadline:
        code, answer = request(
            port, "GET", f"/api/deliveries/{delivery}", headers={"Authorization": f"Bearer {ADMIN}"}
        )
        assert code == 200, answer
        status = json.loads(answer)["status"]
        if status not in ("received", "processing"):
            break
        time.sleep(0.1)
    assert status in ("processed", "ignored"), status


def test_the_images_health_check_passes_while_serving_and_fails_after(
    installed: Installed, serving: tuple[int, subprocess.Popen[bytes]]
) -> None:
    port, proc = serving
    argv = health_check(port)
    assert argv[0] == "python"
    check = [str(installed.bin / "python"), *argv[1:]]
    assert subprocess.run(check, capture_output=True, timeout=30, check=False).returncode == 0
    kill_group(proc, signal.SIGTERM)
    assert subprocess.run(check, capture_output=True, timeout=30, check=False).returncode != 0


def test_the_manifest_ships_in_the_wheel(installed: Installed, tmp_path: Path) -> None:
    proc = subprocess.run(
        [str(installed.bin / "odw"), "app", "manifest", "--url", "https://odw.example.org"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
        env=fresh_env(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["hook_attributes"]["url"] == "https://odw.example.org/webhooks"


def test_odw_init_from_the_wheel_writes_its_templates(installed: Installed, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    proc = subprocess.run(
        [str(installed.bin / "odw"), "init", "--path", str(repo), "--action", "me/odw@v0.1.0"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
        env=fresh_env(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr
    for written in (".github/workflows/odw-stage.yml", ".github/odw.yml", "docs/roadmap.md"):
        assert (repo / written).read_text() == (
            REPO_ROOT / "actions" / "templates" / Path(written).name
        ).read_text().replace("__ACTION__", "me/odw@v0.1.0").replace("__TIMEOUT__", "120")
