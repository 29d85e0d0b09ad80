"""The App end to end, shared by tests, `make demo` and `make bench`: the sample
repository's files, the service as a subprocess, and what to read back."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from app.cli.init_cmd import render_workflow
from app.store import Store
from tests.conftest import REPO_ROOT, odw_executable
from tests.fakegithub import FakeGitHub
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.state import Repository
from tests.service.live import free_port, kill_group, service_env, wait_healthy

REPO = "octo/demo"
AGENT = f"{sys.executable} {REPO_ROOT / 'examples' / 'agents' / 'scripted_agent.py'}"
ROADMAP = """\
# Roadmap

## 1. Demo

- [ ] 1.1. Add a greeting
  - Success: `work/1-1.txt` exists.
- [ ] 1.2. Add a farewell
  - Requires 1.1.
- [ ] 1.3. Add a changelog
  - Requires 1.2.
- [ ] 1.4. Add a licence note
"""
CHAIN = """\
# Roadmap

- [ ] 1.1. Add a greeting
- [ ] 1.2. Add a farewell
  - Requires 1.1.
"""
"""Two tasks, the second requiring the first."""
ODW_YML: dict[str, Any] = {
    "gates": ["test -d work"],
    "identity": {"name": "odw-runner", "email": "odw-runner@example.com"},
    "config": {"maxParallel": 2, "stageDeadlines": {"implement": 120}},
}


# A delivery's status once the worker is done with it (app/store/inbox.py).
FINAL_DELIVERY = ("processed", "ignored", "rejected", "failed")


def wait_until(what: str, pred: Callable[[], Any], timeout: float = 120, every: float = 0.2) -> Any:
    """Poll `pred` until it is truthy; fail naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(every)


def sample_files(roadmap: str = ROADMAP, odw: dict[str, Any] | None = None) -> dict[str, str]:
    return {
        "README.md": "# demo\n",
        "docs/roadmap.md": roadmap,
        ".github/odw.yml": yaml.safe_dump(odw or ODW_YML, sort_keys=False),
        ".github/workflows/odw-stage.yml": render_workflow("octo/odw@v1", 30),
    }


def app_env(fake: FakeGitHub, root: Path, **extra: str) -> dict[str, str]:
    """The App's settings for `Service` against `fake` (its key written under
    `root`), polling fast; `extra` adds or overrides settings."""
    return {
        "ODW_APP_ID": str(fake.app_id),
        "ODW_PRIVATE_KEY_PATH": str(fake.write_private_key(root)),
        "ODW_GITHUB_API_URL": fake.api_url,
        "ODW_POLL_SECONDS": "0.05",
        **extra,
    }


def install_sample(
    fake: FakeGitHub,
    service: Service,
    files: dict[str, str],
    permissions: dict[str, str] | None = None,
    default_branch: str = "main",
) -> Repository:
    """`REPO` holding `files`, with the App installed (granted `permissions`, by
    default the fake's) once the service has recorded the installation."""
    repo = fake.create_repository(REPO, files, default_branch=default_branch)
    installation = fake.install("octo", [REPO], permissions)
    store = service.store()
    try:
        wait_until(
            "the installation to be recorded",
            lambda: store.installations.installation_for_repository(REPO) == installation.id,
            timeout=30,
        )
    finally:
        store.close()
    return repo


@dataclass
class Service:
    """`odw serve` (gunicorn) as a subprocess; kill -9 and restart keep its data."""

    fake: FakeGitHub
    data_dir: Path
    env: dict[str, str]
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    # False: the webhook secret is not passed, the settings file in ODW_ENV_FILE holds it.
    secret_in_env: bool = True

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Service:
        log = (self.data_dir / "serve.log").open("ab")
        self.proc = subprocess.Popen(
            [odw_executable(), "serve", "--host", "127.0.0.1", "--port", str(self.port)],
            env=self._env(),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        try:
            wait_healthy(self.port, self.proc, timeout=60)
        except BaseException:
            self.kill()  # a service that never answered is no test's to stop: do not leak it
            raise
        self.fake.webhooks.url = f"{self.url}/webhooks"
        return self

    def _env(self) -> dict[str, str]:
        secret = self.fake.webhooks.secret if self.secret_in_env else None
        return service_env(self.data_dir, secret, **self.env)

    def kill(self) -> None:
        """SIGKILL the whole process group: no shutdown code runs."""
        if self.proc is not None:
            kill_group(self.proc, signal.SIGKILL)
            self.proc = None

    def stop(self) -> None:
        if self.proc is not None:
            kill_group(self.proc, signal.SIGTERM)
            self.proc = None

    def store(self) -> Store:
        return Store.open(f"sqlite:///{self.data_dir / 'odw.sqlite3'}", migrate_schema=False)

    def log(self) -> str:
        path = self.data_dir / "serve.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def odw(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [odw_executable(), *args],
            env=self._env(),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def run_app(self, repo: str = REPO, *extra: str) -> str:
        proc = self.odw("app", "run", repo, *extra)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def settled(self) -> bool:
        """Every delivery the fake sent is handled and no effect is left to do.

        What a test observes before asserting that nothing (more) happened:
        without it, "nothing happened" passes whenever the service is slow.
        """
        store = self.store()
        try:
            for delivery in [d for d in self.fake.webhooks.deliveries if not d.dropped]:
                row = store.inbox.get(delivery.id)
                if row is None or row.status not in FINAL_DELIVERY:
                    return False
            return all(e.status in ("done", "dead") for e in store.outbox.list())
        finally:
            store.close()

    def wait_settled(self, timeout: float = 60) -> None:
        wait_until("every delivery handled and the outbox drained", self.settled, timeout)

    def runs(self) -> list[dict[str, Any]]:
        proc = self.odw("app", "status", "--json")
        assert proc.returncode == 0, proc.stderr
        return list(json.loads(proc.stdout))


def explain(service: Service, actions: LocalActions | None = None) -> str:
    """What the run says and what the runner saw, for a failing assertion."""
    lines = [f"runner errors: {actions.errors}"] if actions is not None else []
    for r in service.runs():
        result = r.get("result") or {}
        lines.append(f"run {r['run']}: {r['status']} halted={result.get('halted')}")
        for t in result.get("results", []):
            lines.append(f"  {t['id']} {t['status']} {t.get('stage')} {t.get('detail')}")
    lines.append(service.log()[-3000:])
    return "\n".join(lines)


def results(service: Service) -> dict[str, dict[str, Any]]:
    """Task id -> its row in the (only) run's result."""
    runs = service.runs()
    assert len(runs) == 1, runs
    return {t["id"]: t for t in (runs[0].get("result") or {}).get("results", [])}


def trailers(repo: Repository) -> list[str]:
    """The `ODW-Task` trailers of the commits on main, newest first."""
    out = repo.git.git("log", "--format=%B%x1e", "refs/heads/main")
    return [
        line.removeprefix("ODW-Task: ").strip()
        for commit in out.split("\x1e")
        for line in commit.splitlines()
        if line.startswith("ODW-Task: ")
    ]
