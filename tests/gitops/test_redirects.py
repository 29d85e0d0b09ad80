"""Credentials never follow a redirect: an origin that redirects to another host
gets a clear refusal, and the other host never sees the token.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path

from tests.conftest import RunOdw
from tests.gitops.http_origin import GitHttpServer, redirecting_to
from tests.gitops.origins import Origin


def test_integrator_does_not_send_the_token_to_the_host_a_redirect_names(
    origin: Origin, data_dir: Path, tmp_path: Path, run_odw: RunOdw
) -> None:
    token = "ghs_" + secrets.token_hex(16)
    origin.task_branch("1.1.1")
    base_before = origin.head("main")
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "ODW_GIT_TOKEN": token}
    with (
        GitHttpServer(origin.path.parent, "x-access-token", token) as elsewhere,
        redirecting_to(elsewhere.url) as front,
    ):
        done = run_odw(
            "integrate", "--repo", f"{front}/{origin.path.name}", "--base", "main",
            "--branch", "roadmap-1-1-1", "--task", "1.1.1", "--data-dir", str(data_dir),
            "--json", env=env,
        )  # fmt: skip
        authorised = [path for _, path, ok in elsewhere.requests if ok]
    assert done.returncode == 1, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert not report["ok"]
    assert "redirect" in report["summary"]
    assert authorised == []
    assert origin.head("main") == base_before
    assert token not in done.stdout + done.stderr
