"""REST requests per GitHub operation the adapter performs, counted by the fake
GitHub's request log, beside the minimum each operation needs. Token requests
are shown apart: one per installation, repository and permission set an hour."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from app.github import GitHubApp
from app.github.auth import AppCredentials, TokenCache
from app.github.client import RepositoryClient
from app.github.protocols import CheckAction, CheckRunFields, DispatchedRun
from tests.fakegithub import FakeGitHub
from tests.fakegithub.oracles import REST_OPENAPI
from tests.github.conftest import FILES, REPO

INPUTS = {"stage": "plan", "task": "1.1", "token": "bench-token"}


def _operations(
    client: RepositoryClient, fake: FakeGitHub, tmp: Path
) -> list[tuple[str, int, Callable[[], object]]]:
    repo = fake.repos[REPO]
    sha = repo.git.sha("refs/heads/main") or ""
    head = repo.git.commit_files("roadmap-1-1", {"f": "1"}, "work", parent=sha)
    state: dict[str, int] = {}
    fields = CheckRunFields(status="in_progress", external_id="e1", title="t", summary="s",
                            actions=[CheckAction("Retry", "again", "retry")])  # fmt: skip

    def create_check() -> None:
        state["check"] = client.checks.create_check_run("ODW · 1.1", head, fields).id

    def create_pull() -> None:
        state["pull"] = client.pulls.create_pull("roadmap-1-1", "main", "1.1", "b").number

    def comment() -> None:
        state["comment"] = client.comments.create_comment(state["pull"], "<!-- m -->").id

    def dispatch() -> None:
        state["run"] = client.dispatch.dispatch("odw-stage.yml", "main", INPUTS).run_id
        fake.upload_artifact(state["run"], "odw-verdict", {"verdict.json": "{}"})
        fake.complete_run(state["run"])

    def dispatch_ghes() -> None:
        def find() -> DispatchedRun | None:
            # The caller's rule (the App's is `dispatched.resolve`): here, the run holding t2.
            for run in client.runs.list_runs("odw-stage.yml", branch="main"):
                if fake.runs[run.id].inputs.get("token") == "t2":
                    return DispatchedRun(run.id, run.html_url, "resolved")
            return None

        fake.ghes = True
        client.dispatch.dispatch("odw-stage.yml", "main", {**INPUTS, "token": "t2"}, find)
        fake.ghes = False

    def download() -> None:
        (artifact,) = client.artifacts.list_artifacts(state["run"])
        client.artifacts.download_artifact(artifact, tmp / "artifact", 1_000_000)

    def merge() -> None:
        fake.pulls[(REPO, state["pull"])].draft = False
        client.pulls.merge_pull(state["pull"], head)

    return [
        ("read a file at a pinned sha", 1, lambda: client.contents.file_at("docs/roadmap.md", sha)),
        ("read a branch head", 1, lambda: client.contents.branch_sha("main")),
        ("create a branch", 1, lambda: client.refs.create_branch("roadmap-1-2", sha)),
        ("create a check run (3 buttons max)", 1, create_check),
        (
            "update a check run",
            1,
            lambda: client.checks.update_check_run(
                state["check"], CheckRunFields(conclusion="success")
            ),
        ),
        ("list check runs on a ref", 1, lambda: client.checks.check_runs_for_ref(head)),
        ("poll check runs again (304)", 1, lambda: client.checks.check_runs_for_ref(head)),
        ("open a draft pull request", 1, create_pull),
        ("find a pull request by branch", 1, lambda: client.pulls.find_pull("roadmap-1-1", "main")),
        ("update a pull request", 1, lambda: client.pulls.update_pull(state["pull"], body="x")),
        ("post the status comment", 1, comment),
        (
            "find it by marker",
            1,
            lambda: client.comments.find_marked_comment(
                state["pull"], "<!-- m -->", fake.bot_login
            ),
        ),
        (
            "edit it in place",
            1,
            lambda: client.comments.edit_comment(state["comment"], "<!-- m -->."),
        ),
        (
            "react to a command",
            1,
            lambda: client.reactions.react_to_comment(state["comment"], "eyes"),
        ),
        ("check a commenter's permission", 1, lambda: client.permissions.permission_of("octo")),
        ("dispatch a stage (return_run_details)", 1, dispatch),
        ("dispatch a stage (GHES, run resolved from the list)", 3, dispatch_ghes),
        ("poll a workflow run", 1, lambda: client.runs.get_run(state["run"])),
        ("list a run's jobs", 1, lambda: client.runs.list_jobs(state["run"])),
        ("list and download the verdict artifact", 2, download),
        ("squash-merge at the verified sha", 1, merge),
    ]


def main() -> None:
    if not REST_OPENAPI.is_file():
        print("skipped: GitHub's OpenAPI description is not installed (`make oracles`)")
        return
    with tempfile.TemporaryDirectory() as tmp_dir:
        tmp = Path(tmp_dir)
        fake = FakeGitHub(tmp / "github").start()
        try:
            fake.create_repository(REPO, FILES)
            installation = fake.install("octo", [REPO])
            app = GitHubApp(
                AppCredentials(fake.app_id, fake.private_key_pem),
                fake.api_url,
                tokens=TokenCache(),
            )
            client = app.repository(installation.id, REPO)
            rows = []
            for name, minimum, operation in _operations(client, fake, tmp):
                before = len(fake.requests)
                operation()
                sent = fake.requests[before:]
                tokens = sum(1 for r in sent if r["path"].endswith("/access_tokens"))
                rows.append((name, len(sent) - tokens, minimum, tokens))
            width = max(len(r[0]) for r in rows)
            print(f"{'operation':<{width}}  requests  minimum  (+ token requests)")
            for name, sent, minimum, tokens in rows:
                flag = "" if sent <= minimum else "  over the minimum"
                extra = f"  (+{tokens})" if tokens else ""
                print(f"{name:<{width}}  {sent:>8}  {minimum:>7}{extra}{flag}")
            total = sum(r[1] for r in rows)
            print(
                f"total {total} REST requests for {len(rows)} operations "
                f"(minimum {sum(r[2] for r in rows)}); "
                f"{fake.token_requests()} token requests, one per permission set; "
                f"violations of GitHub's OpenAPI description: {len(fake.violations)}"
            )
        finally:
            fake.stop()


if __name__ == "__main__":
    main()
