"""Branch protection and commit statuses.

`FakeGitHub.protect_branch` makes a branch refuse pushes over git smart HTTP
(a `pre-receive` hook answering as GitHub does, GH006) and lists required
status checks; the merge route then refuses a pull request whose head lacks a
passing check or status for each of them (405), as GitHub does.
"""

from __future__ import annotations

from typing import Any

from tests.fakegithub import state as s
from tests.fakegithub.paging import page
from tests.fakegithub.routes import repo_of
from tests.fakegithub.server import Call, FakeGitHub, Reply, error, route
from tests.fakegithub.shapes import iso

HOOK = """#!/bin/sh
# The fake GitHub's branch protection: nothing is pushed to these branches.
status=0
while read old new ref; do
  for protected in {refs}; do
    if [ "$ref" = "$protected" ]; then
      echo "error: GH006: Protected branch update failed for $ref." >&2
      echo "error: Changes must be made through a pull request." >&2
      status=1
    fi
  done
done
exit $status
"""


def write_hook(repo: s.Repository) -> None:
    hooks = repo.git.path / "hooks"
    hooks.mkdir(exist_ok=True)
    hook = hooks / "pre-receive"
    refs = " ".join(f"refs/heads/{b}" for b in sorted(repo.protection)) or "none"
    hook.write_text(HOOK.replace("{refs}", refs))
    hook.chmod(0o755)


def missing_checks(fake: FakeGitHub, repo: s.Repository, branch: str, sha: str) -> list[str]:
    """Required contexts of `branch` without a passing check run or status on `sha`."""
    passing = {
        run.name
        for run in fake.check_runs.values()
        if run.repo == repo.full_name and run.head_sha == sha and run.conclusion == "success"
    }
    latest: dict[str, str] = {}
    for status in reversed(repo.statuses.get(sha, [])):
        latest.setdefault(status["context"], status["state"])
    passing |= {context for context, state in latest.items() if state == "success"}
    return [c for c in repo.protection.get(branch, []) if c not in passing]


def status_record(
    fake: FakeGitHub, repo: s.Repository, sha: str, body: dict[str, Any]
) -> dict[str, Any]:
    status_id = fake.next_id()
    now = iso(fake.now())
    return {
        "url": f"{fake.api_url}/repos/{repo.full_name}/statuses/{sha}",
        "avatar_url": None,
        "id": status_id,
        "node_id": f"SC_{status_id}",
        "state": body["state"],
        "description": body.get("description"),
        "target_url": body.get("target_url"),
        "context": body.get("context") or "default",
        "created_at": now,
        "updated_at": now,
        "creator": fake.shapes.user(fake.bot_login, "Bot"),
    }


@route("GET", "/repos/{owner}/{repo}/branches/{branch}/protection/required_status_checks")
def required_status_checks(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    branch = call.params["branch"]
    if branch not in repo.protection:
        raise error(404, "Branch not protected")
    contexts = list(repo.protection[branch])
    url = f"{fake.api_url}/repos/{repo.full_name}/branches/{branch}/protection"
    return Reply(
        200,
        {
            "url": f"{url}/required_status_checks",
            "strict": True,
            "contexts": contexts,
            "checks": [{"context": c, "app_id": None} for c in contexts],
            "contexts_url": f"{url}/required_status_checks/contexts",
        },
    )


@route("POST", "/repos/{owner}/{repo}/statuses/{sha}")
def create_status(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    sha = call.params["sha"]
    if repo.git.sha(sha) != sha:
        raise error(422, "No commit found for SHA: " + sha)
    status = status_record(fake, repo, sha, call.body)
    with fake.lock:
        repo.statuses.setdefault(sha, []).append(status)
    return Reply(201, status)


@route("GET", "/repos/{owner}/{repo}/commits/{ref}/statuses")
def list_statuses(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    ref = call.params["ref"]
    sha = repo.git.sha(ref) or repo.git.sha(f"refs/heads/{ref}")
    found = list(reversed(repo.statuses.get(sha or "", [])))
    chunk, links = page(fake, call, found)
    return Reply(200, chunk, links)
