"""`make live-check`: a short end-to-end check of a real GitHub App, the first
thing to run after registering one (docs/operations.md).

With `ODW_LIVE_APP_ID`, `ODW_LIVE_PRIVATE_KEY_PATH` and `ODW_LIVE_REPO` set it
does, with ODW's own client (`app/github`) and the App's real credentials,
what a run does first: find the installation, create a task branch and push a
commit to it, post a check run whose summary is 65,535 bytes (GitHub's
limit), open a pull request and comment on it, dispatch the stage workflow
(`odw-stage.yml`, the `gates` stage), wait for its run and read its
`odw-verdict` artifact; then it closes the pull request and deletes the
branch, whatever failed. One line a step; the exit status is 1 when one
failed. Unset, it says so in one line and exits 0. `ODW_GITHUB_API_URL`
points it at GitHub Enterprise Server (or a fake GitHub in tests).
"""

from __future__ import annotations

import os
import secrets
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from app.apphost.adapters import git_url
from app.github import GitHubApp
from app.github.auth import AppCredentials, CredentialsError
from app.github.client import RepositoryClient
from app.github.errors import GitHubError
from app.github.protocols import CheckRunFields, DispatchedRun
from app.gitops.auth import TOKEN_ENV, askpass_script
from app.gitops.runner import GitError, GitRunner
from app.service_settings import DEFAULT_API_URL

NAMES = ("ODW_LIVE_APP_ID", "ODW_LIVE_PRIVATE_KEY_PATH", "ODW_LIVE_REPO")
SKIPPED = (
    "live-check: skipped: set ODW_LIVE_APP_ID, ODW_LIVE_PRIVATE_KEY_PATH and ODW_LIVE_REPO "
    "(the App's id, its private key file, OWNER/REPO it is installed on) to check a real App"
)
WORKFLOW = "odw-stage.yml"
ARTIFACT = "odw-verdict"
CHECK_NAME = "ODW · live check"
SUMMARY_BYTES = 65_535  # GitHub's limit for a check run's `output.summary`
RUN_TIMEOUT = 900.0  # seconds to wait for the dispatched run (ODW_LIVE_TIMEOUT)
POLL = 5.0
T = TypeVar("T")


class StepFailed(Exception):
    """A step of the check failed; its line is already printed."""


def summary(size: int = SUMMARY_BYTES) -> str:
    """Exactly `size` bytes of UTF-8, with multibyte characters in it (GitHub counts bytes)."""
    head = "ODW live check: this summary is 65,535 bytes of UTF-8 — ✓ é ü.\n\n"
    rest = size - len(head.encode())
    return head + "x" * rest


@dataclass
class LiveCheck:
    app: GitHubApp
    repository: str
    api_url: str
    timeout: float = RUN_TIMEOUT
    poll: float = POLL
    say: Callable[[str], None] = print
    sleep: Callable[[float], None] = time.sleep
    branch: str = field(default_factory=lambda: f"roadmap-odw-live-check-{secrets.token_hex(4)}")
    failed: bool = False

    def step(self, name: str, fn: Callable[[], T], detail: Callable[[T], str]) -> T:
        try:
            value = fn()
        except (GitHubError, GitError, CredentialsError, OSError, ValueError) as exc:
            self.failed = True
            self.say(f"FAIL {name}: {exc}")
            raise StepFailed(name) from None
        self.say(f"ok   {name}: {detail(value)}")
        return value

    def run(self) -> int:
        client: RepositoryClient | None = None
        pull: int | None = None
        created = False
        try:
            installation = self.step(
                "installation",
                lambda: self.app.installation_of(self.repository),
                lambda i: f"the App is installed on {self.repository} (installation {i})",
            )
            client = self.app.repository(installation, self.repository)
            live = client
            base = self.step("default branch", live.contents.default_branch, str)
            base_sha = self.step(
                "base head",
                lambda: _present(live.contents.branch_sha(base), f"{base} has no head"),
                lambda s: s[:12],
            )
            self.step(
                "create branch",
                lambda: live.refs.create_branch(self.branch, base_sha),
                lambda _: self.branch,
            )
            created = True
            head = self.step("push a commit (git)", lambda: self._push(live), lambda s: s[:12])
            self.step("check run", lambda: self._check_run(live, head), str)
            pull = self.step(
                "pull request",
                lambda: (
                    live.pulls.create_pull(
                        self.branch,
                        base,
                        "ODW live check",
                        "Opened by `make live-check`; closed by it.",
                    ).number
                ),
                lambda n: f"#{n}",
            )
            number = pull
            self.step(
                "comment",
                lambda: live.comments.create_comment(number, "ODW live check: a comment.").id,
                lambda c: f"comment {c}",
            )
            run_id = self.step("dispatch", lambda: self._dispatch(live), lambda r: f"run {r}")
            self.step("run completes", lambda: self._wait(live, run_id), _concluded)
            self.step("read artifact", lambda: self._artifact(live, run_id), ", ".join)
        except StepFailed:
            pass
        finally:
            self._clean(client, pull, created)
        self.say("live-check: FAILED" if self.failed else "live-check: every step passed")
        return 1 if self.failed else 0

    def _push(self, client: RepositoryClient) -> str:
        """One commit on the branch, pushed over HTTPS with the installation token
        (through GIT_ASKPASS, never in a URL), as the stage workflow pushes."""
        token = client.git_token(write=True)
        url = git_url(self.api_url, self.repository)
        with tempfile.TemporaryDirectory(prefix="odw-live-check-") as tmp:
            work = Path(tmp)
            env = {"GIT_ASKPASS": str(askpass_script(work)), TOKEN_ENV: token}
            git = GitRunner(env=env, secrets=[token])
            repo = work / "repo"
            git.run("init", "--quiet", str(repo))
            git.run("fetch", "--quiet", "--depth=1", url, f"refs/heads/{self.branch}", cwd=repo)
            git.run("checkout", "--quiet", "FETCH_HEAD", cwd=repo)
            (repo / ".odw-live-check").write_text("written by make live-check\n")
            git.run("add", ".odw-live-check", cwd=repo)
            who = {
                "GIT_AUTHOR_NAME": "ODW live check",
                "GIT_AUTHOR_EMAIL": "odw-live-check@localhost",
                "GIT_COMMITTER_NAME": "ODW live check",
                "GIT_COMMITTER_EMAIL": "odw-live-check@localhost",
            }
            git.run("commit", "--quiet", "-m", "ODW live check", cwd=repo, env=who)
            git.run("push", "--quiet", url, f"HEAD:refs/heads/{self.branch}", cwd=repo)
            return git.run("rev-parse", "HEAD", cwd=repo).stdout.strip()

    def _check_run(self, client: RepositoryClient, head: str) -> str:
        text = summary()
        fields = CheckRunFields(
            status="completed",
            conclusion="neutral",
            title="ODW live check",
            summary=text,
            external_id=f"live-check:{self.branch}",
        )
        made = client.checks.create_check_run(CHECK_NAME, head, fields)
        kept = len((made.summary or "").encode())
        if kept != SUMMARY_BYTES:
            raise ValueError(f"GitHub kept {kept} bytes of a {SUMMARY_BYTES}-byte summary")
        return f"check run {made.id} kept its {SUMMARY_BYTES}-byte summary"

    def _dispatch(self, client: RepositoryClient) -> int:
        token = secrets.token_hex(8)
        inputs = {
            "stage": "gates",
            "task": "0.0",
            "token": token,
            "tag": token[:8],
            "run-id": "live-check",
            "branch": self.branch,
        }
        runs = client.runs

        def find() -> DispatchedRun | None:
            """The run whose name shows this dispatch's tag (GHES names no run)."""
            for run in runs.list_runs(WORKFLOW, branch=self.branch, event="workflow_dispatch"):
                if inputs["tag"] in run.display_title:
                    return DispatchedRun(run.id, run.html_url, "resolved")
            return None

        return client.dispatch.dispatch(WORKFLOW, self.branch, inputs, find).run_id

    def _wait(self, client: RepositoryClient, run_id: int) -> str | None:
        deadline = time.monotonic() + self.timeout
        while True:
            run = client.runs.get_run(run_id)
            if run.status == "completed":
                return run.conclusion
            if time.monotonic() > deadline:
                raise ValueError(f"run {run_id} is still {run.status} after {self.timeout:g}s")
            self.sleep(self.poll)

    def _artifact(self, client: RepositoryClient, run_id: int) -> list[str]:
        found = client.artifacts.find_artifact(run_id, ARTIFACT)
        if found is None:
            raise ValueError(f"run {run_id} uploaded no {ARTIFACT} artifact")
        with tempfile.TemporaryDirectory(prefix="odw-live-check-") as tmp:
            written = client.artifacts.download_artifact(found, Path(tmp), 8 << 20)
            return sorted(p.relative_to(tmp).as_posix() for p in written) or ["(empty)"]

    def _clean(self, client: RepositoryClient | None, pull: int | None, created: bool) -> None:
        """Close the pull request and delete the branch, whatever failed before."""
        if client is None:
            return
        try:
            if pull is not None:
                self.step(
                    "close pull request",
                    lambda: client.pulls.update_pull(pull, state="closed").number,
                    lambda n: f"#{n}",
                )
            if created:
                self.step(
                    "delete branch",
                    lambda: client.refs.delete_branch(self.branch),
                    lambda _: self.branch,
                )
        except StepFailed:
            self.say(f"live-check: delete {self.branch} by hand")


def _concluded(conclusion: str | None) -> str:
    return f"concluded {conclusion or 'without a conclusion'}"


def _present(value: T | None, problem: str) -> T:
    if value is None:
        raise ValueError(problem)
    return value


def main(env: Mapping[str, str] | None = None) -> int:
    env = os.environ if env is None else env
    if not all(env.get(name) for name in NAMES):
        print(SKIPPED)
        return 0
    api_url = env.get("ODW_GITHUB_API_URL") or DEFAULT_API_URL
    repository = env["ODW_LIVE_REPO"]
    try:
        if repository.count("/") != 1 or not all(repository.split("/")):
            raise ValueError(f"ODW_LIVE_REPO must be OWNER/REPO, got {repository!r}")
        app_id = int(env["ODW_LIVE_APP_ID"])
        credentials = AppCredentials.load(app_id, Path(env["ODW_LIVE_PRIVATE_KEY_PATH"]))
        app = GitHubApp(credentials, api_url)
    except (ValueError, CredentialsError) as exc:
        print(f"live-check: FAIL credentials: {exc}")
        return 1
    timeout = float(env.get("ODW_LIVE_TIMEOUT") or RUN_TIMEOUT)
    return LiveCheck(app, repository, api_url, timeout=timeout).run()


if __name__ == "__main__":
    sys.exit(main())
