"""A token in the environment authenticates git, and appears nowhere else.

The origin is served over smart HTTP with Basic auth, so a push that lands proves
git obtained the token through GIT_ASKPASS. Then every file under the data dir,
the home directory and the origin, every git argv (recorded by a wrapper), every
request line and all output are searched for it.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

import pytest

from tests.conftest import RunOdw
from tests.gitops.conftest import GitSpy
from tests.gitops.http_origin import GitHttpServer
from tests.gitops.origins import Origin


def _files_containing(root: Path, needle: bytes) -> list[Path]:
    hits = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink() and needle in path.read_bytes():
            hits.append(path)
    return hits


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[credential]\n\thelper = store\n")  # a careless user
    return home


def _run(run_odw: RunOdw, origin_url: str, data_dir: Path, env: dict[str, str]):
    return run_odw(
        "integrate", "--repo", origin_url, "--base", "main", "--branch", "roadmap-1-1-1",
        "--task", "1.1.1", "--data-dir", str(data_dir), "--json", env=env,
    )  # fmt: skip


def test_token_authenticates_and_never_leaks(
    origin: Origin, data_dir: Path, spy: GitSpy, home: Path, run_odw: RunOdw
):
    token = "ghs_" + secrets.token_hex(16)
    origin.task_branch("1.1.1")
    env = {**os.environ, **spy.env(), "HOME": str(home), "ODW_GIT_TOKEN": token}
    with GitHttpServer(origin.path.parent, "x-access-token", token) as server:
        url = f"{server.url}/{origin.path.name}"
        done = _run(run_odw, url, data_dir, env)
        assert done.returncode == 0, done.stdout + done.stderr
        assert json.loads(done.stdout)["pushed"]
        assert len(origin.task_commits("1.1.1")) == 1
        assert any(ok for *_, ok in server.requests), "git never authenticated"
        assert any(not ok for *_, ok in server.requests)  # it was challenged, then answered
        assert all(token not in path for _, path, _ in server.requests)

    needle = token.encode()
    assert token not in done.stdout + done.stderr
    assert _files_containing(data_dir, needle) == []
    assert _files_containing(home, needle) == []  # no ~/.git-credentials despite `store`
    assert _files_containing(origin.path, needle) == []
    calls = spy.calls()
    assert calls and all(token not in arg for argv in calls for arg in argv)
    assert any("push" in argv for argv in calls)
    mirror_configs = list(data_dir.glob("mirrors/*.git/config"))
    assert mirror_configs and url in mirror_configs[0].read_text()


def test_a_wrong_token_fails_cleanly_without_echoing_it(
    origin: Origin, data_dir: Path, home: Path, run_odw: RunOdw
):
    good, wrong = "ghs_" + secrets.token_hex(16), "ghs_" + secrets.token_hex(16)
    origin.task_branch("1.1.1")
    env = {**os.environ, "HOME": str(home), "ODW_GIT_TOKEN": wrong}
    with GitHttpServer(origin.path.parent, "x-access-token", good) as server:
        done = _run(run_odw, f"{server.url}/{origin.path.name}", data_dir, env)
    assert done.returncode == 1
    report = json.loads(done.stdout)
    assert not report["ok"] and "cannot fetch" in report["summary"]
    assert "Authentication failed" in report["summary"]
    assert wrong not in done.stdout + done.stderr
    assert _files_containing(data_dir, wrong.encode()) == []
    assert _files_containing(home, wrong.encode()) == []
