"""`python -m tests.fakegithub` serves a repository an App can use at once."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

from app.github import GitHubApp
from app.github.auth import AppCredentials, TokenCache
from tests.fakegithub.oracles import REPO_ROOT, REST_OPENAPI, require_oracle


def test_the_fake_runs_standalone_and_an_app_can_read_the_repository(tmp_path: Path) -> None:
    require_oracle(REST_OPENAPI)
    files = tmp_path / "files"
    (files / "docs").mkdir(parents=True)
    (files / "docs/roadmap.md").write_text("# Roadmap\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakegithub", "--root", str(tmp_path / "gh"),
         "--repo", "octo/sample", "--files-from", str(files)],
        cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        key = Path(info["private_key_path"]).read_text()
        app = GitHubApp(AppCredentials(info["app_id"], key), info["api_url"], tokens=TokenCache())
        client = app.repository(info["installation_id"], "octo/sample")
        sha = client.contents.branch_sha("main")
        assert sha and client.contents.file_at("docs/roadmap.md", sha) == b"# Roadmap\n"
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
