"""A local stand-in for GitHub Actions: runs dispatched `odw-stage.yml` runs for real.

What the job in `actions/templates/odw-stage.yml` does, done on this machine:
check the task branch out (with an installation token, never kept in a
config), read `.github/odw.yml` from the default branch, run `odw stage` (the
real runner, as a subprocess) with the push token in a private file, upload the
verdict directory as the artifact `odw-verdict`, and complete the run with the
job's conclusion, which sends the signed `workflow_run` webhook. Used by the
App's end-to-end tests, `make demo` and `make bench`.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from app.gitops.auth import TOKEN_ENV, askpass_script
from app.gitops.runner import git
from app.python_child import odw_argv
from tests.fakegithub import state as s
from tests.fakegithub.server import FakeGitHub

WORKFLOW = "odw-stage.yml"
WRITE = {"contents": "write", "metadata": "read"}


@dataclass
class LocalActions:
    fake: FakeGitHub
    root: Path
    agent: str
    env: dict[str, str] = field(default_factory=dict)
    parallel: int = 2
    # Called before a run starts; return False to leave the run queued (tests).
    admit: Callable[[s.WorkflowRun], bool] | None = None
    done: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _queue: queue.Queue[s.WorkflowRun | None] = field(default_factory=queue.Queue)
    _threads: list[threading.Thread] = field(default_factory=list)
    paused: threading.Event = field(default_factory=threading.Event)

    def start(self) -> LocalActions:
        self.root.mkdir(parents=True, exist_ok=True)
        self.fake.on_dispatch.append(self._queue.put)
        for i in range(self.parallel):
            t = threading.Thread(target=self._work, name=f"local-actions-{i}", daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def stop(self) -> None:
        with contextlib.suppress(ValueError):
            self.fake.on_dispatch.remove(self._queue.put)
        for _ in self._threads:
            self._queue.put(None)
        for t in self._threads:
            t.join(30)

    def queued(self) -> list[s.WorkflowRun]:
        return [r for r in self.fake.runs.values() if r.status == "queued"]

    def _work(self) -> None:
        while True:
            run = self._queue.get()
            if run is None:
                return
            while self.paused.is_set():
                threading.Event().wait(0.05)
            if run.workflow != WORKFLOW or (self.admit is not None and not self.admit(run)):
                continue
            try:
                self.execute(run)
            except Exception as exc:  # a broken runner: the run fails without a verdict
                self.errors.append(f"run {run.id}: {type(exc).__name__}: {exc}")
                with contextlib.suppress(Exception):
                    self.fake.complete_run(run.id, "failure")

    def execute(self, run: s.WorkflowRun) -> None:
        fake = self.fake
        repo = fake.repos[run.repo]
        installation = fake.installations[repo.installation_id or 0]
        token = fake.mint_token(installation, [run.repo], WRITE).token
        fake.start_run(run.id)
        work = Path(tempfile.mkdtemp(prefix=f"run-{run.id}-", dir=self.root))
        try:
            conclusion = self._job(run, repo, token, work)
            out = work / "out"
            files = {
                p.relative_to(out).as_posix(): p.read_bytes()
                for p in sorted(out.rglob("*"))
                if p.is_file()
            }
            if files:
                fake.upload_artifact(run.id, "odw-verdict", files)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        fake.complete_run(run.id, conclusion)
        self.done.append(run.id)

    def _job(self, run: s.WorkflowRun, repo: s.Repository, token: str, work: Path) -> str:
        env = {"GIT_ASKPASS": str(askpass_script(self.root)), TOKEN_ENV: token}
        checkout = work / "task"
        url = self.fake.git_url(run.repo)
        git(work, "clone", "--quiet", "--branch", run.ref, url, str(checkout), env=env)
        config = work / "odw.yml"
        config.write_bytes(
            repo.git.show(f"refs/heads/{repo.default_branch}", ".github/odw.yml") or b""
        )
        token_file = work / "push-token"
        token_file.write_text(token)
        token_file.chmod(0o600)
        out = work / "out"
        out.mkdir()
        inputs = run.inputs
        # As the action's installed `odw` script: nothing in the checkout is imported.
        argv = odw_argv("stage", "--stage", inputs["stage"])
        argv += ["--task", inputs["task"], "--token", inputs["token"], "--workdir", "."]
        argv += ["--out", str(out / "verdict.json"), "--config", str(config)]
        argv += ["--branch", run.ref, "--push-token-file", str(token_file), "--quiet"]
        if inputs["stage"] != "gates":
            argv += ["--agent", self.agent]
        child = {**os.environ, **self.env, "RUNNER_TEMP": str(work)}
        child.pop(TOKEN_ENV, None)
        proc = subprocess.run(
            argv, cwd=checkout, env=child, capture_output=True, text=True, timeout=600, check=False
        )
        if not (out / "verdict.json").is_file():
            self.errors.append(f"run {run.id}: no verdict: {proc.stderr[-2000:]}")
        return "success" if proc.returncode == 0 else "failure"
