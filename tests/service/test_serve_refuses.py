"""`odw serve` refuses to start on broken settings: exit 2 within seconds, one
line per problem naming the variable, no traceback (issue 29, item 3)."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.conftest import odw_executable
from tests.fakegithub import FakeGitHub
from tests.fakegithub.oracles import REST_OPENAPI, require_oracle
from tests.service.live import free_port
from tests.service.test_live_service import serve_refused

pytestmark = pytest.mark.slow

SECRET = "refusal-test-secret"
# Seconds a refusal may take: about 2 s of CPU (imports, one connection
# attempt), with room for a machine shared by parallel tests. A service that
# starts instead never exits by itself.
REFUSED_WITHIN = 20.0

Env = Callable[[Path], dict[str, str]]
ARMOUR = "-----%s RSA PRIVATE KEY-----"


def _file(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def _other_rsa_key(tmp: Path) -> Path:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    return _file(tmp / "other.pem", pem)


CASES: list[tuple[str, Env, list[str]]] = [
    (
        "missing_key_file",
        lambda t: {"ODW_APP_ID": "1", "ODW_PRIVATE_KEY_PATH": str(t / "missing.pem")},
        ["ODW_PRIVATE_KEY_PATH: cannot read {tmp}/missing.pem"],
    ),
    (
        "malformed_key",
        lambda t: {
            "ODW_APP_ID": "1",
            "ODW_PRIVATE_KEY_PATH": str(
                _file(
                    t / "k.pem",
                    "-----BEGIN RSA PRIVATE KEY-----\nxx\n-----END RSA PRIVATE KEY-----\n",
                )
            ),
        },
        ["ODW_PRIVATE_KEY_PATH: {tmp}/k.pem is not a PEM private key"],
    ),
    (
        "non_numeric_app_id",
        lambda t: {"ODW_APP_ID": "my-odw-app", "ODW_PRIVATE_KEY_PATH": str(t / "k.pem")},
        ["ODW_APP_ID: "],
    ),
    (
        "app_id_without_key",
        lambda t: {"ODW_APP_ID": "12345"},
        ["ODW_PRIVATE_KEY_PATH: not set while ODW_APP_ID is"],
    ),
    (
        "unreachable_database",
        lambda t: {"ODW_DATABASE_URL": f"postgresql+psycopg://odw@127.0.0.1:{free_port()}/odw"},
        ["ODW_DATABASE_URL: cannot reach the database postgresql+psycopg://odw@127.0.0.1:"],
    ),
    (
        "unwritable_data_dir",
        # A path under a regular file: no directory can be made there, even by root.
        lambda t: {"ODW_DATA_DIR": str(_file(t / "a-file", "") / "data")},
        ["ODW_DATA_DIR: cannot write to {tmp}/a-file/data: Not a directory"],
    ),
    (
        "no_git_on_path",
        lambda t: {"PATH": str(t)},
        ["PATH: no `git` found"],
    ),
    (
        "two_problems_two_lines",
        lambda t: {"ODW_WEBHOOK_SECRET": "", "ODW_APP_ID": "12345"},
        ["ODW_WEBHOOK_SECRET is not set", "ODW_PRIVATE_KEY_PATH: not set while ODW_APP_ID is"],
    ),
]


def refused(tmp_path: Path, env: dict[str, str], expected: list[str]) -> None:
    started = time.monotonic()
    result = serve_refused({"ODW_DATA_DIR": str(tmp_path), "ODW_WEBHOOK_SECRET": SECRET, **env})
    took = time.monotonic() - started
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == len(expected), result.stderr
    for line, want in zip(lines, expected, strict=True):
        assert line.startswith("odw serve: "), line
        assert want.format(tmp=tmp_path) in line, (want, line)
    assert took < REFUSED_WITHIN, f"refused after {took:.1f} s"


@pytest.mark.parametrize(("env", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_serve_refuses_broken_settings_with_one_line_each(
    tmp_path: Path, env: Env, expected: list[str]
) -> None:
    refused(tmp_path, env(tmp_path), expected)


@pytest.fixture
def fake(tmp_path: Path) -> Iterator[FakeGitHub]:
    require_oracle(REST_OPENAPI)
    server = FakeGitHub(tmp_path / "github").start()
    try:
        yield server
    finally:
        server.stop()
    server.assert_no_violations()


def test_serve_refuses_a_key_github_does_not_accept_for_the_app(
    tmp_path: Path, fake: FakeGitHub
) -> None:
    """A valid RSA key that is not the App's: GitHub answers `GET /app` 401."""
    env = {
        "ODW_APP_ID": str(fake.app_id),
        "ODW_PRIVATE_KEY_PATH": str(_other_rsa_key(tmp_path)),
        "ODW_GITHUB_API_URL": fake.api_url,
    }
    refused(
        tmp_path,
        env,
        ["ODW_APP_ID / ODW_PRIVATE_KEY(_PATH): GitHub refused the App's token"],
    )
    assert [r["path"] for r in fake.requests] == ["/app"]


def test_a_worker_run_apart_refuses_an_app_id_without_a_key(tmp_path: Path) -> None:
    """`odw worker` on its own (beside `odw serve` elsewhere) refuses too,
    instead of logging at INFO that deliveries are not acted on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ODW_")}
    env.update(ODW_DATA_DIR=str(tmp_path), ODW_APP_ID="12345")
    result = subprocess.run(
        [odw_executable(), "worker", "--threads", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    (line,) = [x for x in result.stderr.splitlines() if not x.startswith("{")]
    assert line.startswith("odw worker: ODW_APP_ID and ODW_PRIVATE_KEY"), line
