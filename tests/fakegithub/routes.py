"""REST handlers: App tokens, repositories, checks, conversation, pulls, git data."""

from __future__ import annotations

import json
from typing import Any

from tests.fakegithub import state as s
from tests.fakegithub.checkruns import refuse_reopening
from tests.fakegithub.limits import refuse_long_comment, refuse_long_output
from tests.fakegithub.paging import page
from tests.fakegithub.server import Call, FakeGitHub, Reply, error, route
from tests.fakegithub.shapes import _rewrite_repos, iso


def repo_of(fake: FakeGitHub, call: Call) -> s.Repository:
    repo = fake.repos.get(f"{call.params['owner']}/{call.params['repo']}")
    if repo is None:
        raise error(404, "Not Found")
    return repo


def actor(fake: FakeGitHub, call: Call) -> str:
    return fake.bot_login if call.token else "unknown"


@route("POST", "/app/installations/{installation_id}/access_tokens")
def access_token(fake: FakeGitHub, call: Call) -> Reply:
    installation = fake.installations.get(call.int("installation_id"))
    if installation is None:  # never installed, or uninstalled (`fake.uninstall`)
        raise error(404, "Not Found")
    if installation.suspended:
        # GitHub's answer while an installation is suspended ("Suspending a GitHub App
        # installation"; recorded in octokit/octokit.rb#1307, hcengineering/platform#7639).
        raise Reply(
            403,
            {
                "message": "This installation has been suspended",
                "documentation_url": "https://docs.github.com/rest/reference/apps#create-an-installation-access-token-for-an-app",
            },
        )
    body = call.body or {}
    names = body.get("repositories")
    repositories = None
    if names is not None:
        repositories = []
        for name in names:
            full = f"{installation.account}/{name}"
            if full not in installation.repositories:
                raise error(
                    422,
                    "There is at least one repository that does not exist or is not "
                    f"accessible to the parent installation: {name}",
                )
            repositories.append(full)
    wanted = body.get("permissions") or dict(installation.permissions)
    for name, level in wanted.items():
        held = installation.permissions.get(name)
        if held is None or (level == "write" and held == "read"):
            raise error(
                422, f"The permissions requested are not granted to this installation: {name}"
            )
    token = fake.mint_token(installation, repositories, dict(wanted))
    data = fake.shapes.example("installation-token")
    data.update(
        token=token.token,
        expires_at=iso(token.expires_at),
        permissions=token.permissions,
        repository_selection="selected" if repositories else "all",
    )
    template = data["repositories"][0]
    data["repositories"] = []
    for name in repositories or []:
        item = json.loads(json.dumps(template))
        _rewrite_repos(item, fake.repos[name], fake)
        data["repositories"].append(item)
    data.pop("single_file", None)
    data.pop("single_file_paths", None)
    return Reply(201, data)


@route("GET", "/app")
def authenticated_app(fake: FakeGitHub, call: Call) -> Reply:
    """The App the JWT names; a JWT that does not verify was answered 401
    before this (`_authenticate`)
    (https://docs.github.com/rest/apps/apps#get-the-authenticated-app)."""
    data = fake.shapes.example("integration")
    data.update(id=fake.app_id, slug=fake.app_slug, name=fake.app_slug)
    return Reply(200, data)


@route("GET", "/repos/{owner}/{repo}/installation")
def repository_installation(fake: FakeGitHub, call: Call) -> Reply:
    """The App's installation on a repository, asked with the App's JWT; 404 where
    it is not installed
    (https://docs.github.com/rest/apps/apps#get-a-repository-installation-for-the-authenticated-app)."""
    repo = repo_of(fake, call)
    installation = fake.installations.get(repo.installation_id or 0)
    if installation is None:
        raise error(404, "Not Found")
    data = fake.shapes.example("installation")
    data.update(id=installation.id, app_id=fake.app_id, app_slug=fake.app_slug)
    data["permissions"] = dict(installation.permissions)
    data["repository_selection"] = "selected"
    if isinstance(data.get("account"), dict):
        data["account"]["login"] = installation.account
    return Reply(200, data)


@route("GET", "/repos/{owner}/{repo}")
def get_repository(fake: FakeGitHub, call: Call) -> Reply:
    return Reply(200, fake.shapes.repository(repo_of(fake, call)))


# -- check runs ------------------------------------------------------------------


def apply_check_fields(run: s.CheckRun, body: dict[str, Any], now: float) -> None:
    for name in ("name", "details_url", "external_id"):
        if name in body:
            setattr(run, name, body[name])
    if "output" in body:
        run.output = dict(body["output"])
    if "actions" in body:
        run.actions = list(body["actions"])
    if "status" in body:
        run.status = body["status"]
    if body.get("conclusion"):
        run.conclusion = body["conclusion"]
        run.status = "completed"
    if run.status == "completed" and run.completed_at is None:
        run.completed_at = now
    if run.status == "completed" and not run.conclusion:
        raise error(422, "Conclusion is required when status is completed")


@route("POST", "/repos/{owner}/{repo}/check-runs")
def create_check_run(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    body = call.body
    refuse_long_output(body.get("output"))
    if repo.git.sha(body["head_sha"]) != body["head_sha"]:
        raise error(422, "No commit found for SHA: " + body["head_sha"])
    run = s.CheckRun(
        fake.next_id(),
        repo.full_name,
        body["name"],
        body["head_sha"],
        "queued",
        None,
        "",
        None,
        {},
        [],
        fake.now(),
        app_id=fake.app_id,  # the App whose installation token made the request
    )
    apply_check_fields(run, body, fake.now())
    with fake.lock:
        fake.check_runs[run.id] = run
    fake.webhooks.send("check_run", "created", check_run=run)
    return Reply(201, fake.shapes.check_run(run))


@route("PATCH", "/repos/{owner}/{repo}/check-runs/{check_run_id}")
def update_check_run(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    run = fake.check_runs.get(call.int("check_run_id"))
    if run is None or run.repo != repo.full_name:
        raise error(404, "Not Found")
    refuse_long_output((call.body or {}).get("output"))
    with fake.lock:
        refuse_reopening(run, call.body or {})
        was = run.status
        apply_check_fields(run, call.body, fake.now())
        run.updates += 1
    if run.status == "completed" and was != "completed":
        fake.webhooks.send("check_run", "completed", check_run=run)
    return Reply(200, fake.shapes.check_run(run))


@route("GET", "/repos/{owner}/{repo}/check-runs/{check_run_id}")
def get_check_run(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    run = fake.check_runs.get(call.int("check_run_id"))
    if run is None or run.repo != repo.full_name:
        raise error(404, "Not Found")
    return Reply(200, fake.shapes.check_run(run))


@route("GET", "/repos/{owner}/{repo}/commits/{ref}/check-runs")
def list_check_runs(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    sha = repo.git.sha(call.params["ref"]) or repo.git.sha(f"refs/heads/{call.params['ref']}")
    if sha is None:
        raise error(422, f"No commit found for SHA: {call.params['ref']}")
    runs = [r for r in fake.check_runs.values() if r.repo == repo.full_name and r.head_sha == sha]
    name = call.query.get("check_name")
    if name:
        runs = [r for r in runs if r.name == name]
    # `filter=latest` (the default): the newest check run of each name
    # (https://docs.github.com/en/rest/checks/runs#list-check-runs-for-a-git-reference).
    if call.query.get("filter", "latest") == "latest":
        latest: dict[str, s.CheckRun] = {}
        for run in runs:
            latest[run.name] = run
        runs = list(latest.values())
    chunk, links = page(fake, call, runs)
    return Reply(
        200,
        {"total_count": len(runs), "check_runs": [fake.shapes.check_run(r) for r in chunk]},
        links,
    )


# -- comments, reactions, permissions -----------------------------------------------


def _issue_exists(fake: FakeGitHub, repo: s.Repository, number: int) -> None:
    if (repo.full_name, number) not in fake.pulls and number not in repo.issues:
        raise error(404, "Not Found")


@route("POST", "/repos/{owner}/{repo}/issues/{issue_number}/comments")
def create_comment(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    number = call.int("issue_number")
    _issue_exists(fake, repo, number)
    refuse_long_comment(call.body["body"])
    comment = fake.add_comment(repo.full_name, number, call.body["body"], fake.bot_login, "Bot")
    return Reply(201, fake.shapes.comment(comment))


@route("GET", "/repos/{owner}/{repo}/issues/{issue_number}/comments")
def list_comments(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    number = call.int("issue_number")
    _issue_exists(fake, repo, number)
    found = [
        c
        for c in sorted(fake.comments.values(), key=lambda c: c.id)
        if c.repo == repo.full_name and c.number == number
    ]
    chunk, links = page(fake, call, found)
    return Reply(200, [fake.shapes.comment(c) for c in chunk], links)


def _comment_of(fake: FakeGitHub, call: Call) -> s.Comment:
    repo = repo_of(fake, call)
    comment = fake.comments.get(call.int("comment_id"))
    if comment is None or comment.repo != repo.full_name:
        raise error(404, "Not Found")
    return comment


@route("PATCH", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
def edit_comment(fake: FakeGitHub, call: Call) -> Reply:
    comment = _comment_of(fake, call)
    refuse_long_comment(call.body["body"])
    with fake.lock:
        comment.body = call.body["body"]
        comment.updated_at = fake.now()
        comment.edits += 1
    fake.webhooks.send("issue_comment", "edited", comment=comment)
    return Reply(200, fake.shapes.comment(comment))


@route("GET", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
def get_comment(fake: FakeGitHub, call: Call) -> Reply:
    return Reply(200, fake.shapes.comment(_comment_of(fake, call)))


@route("DELETE", "/repos/{owner}/{repo}/issues/comments/{comment_id}")
def delete_comment(fake: FakeGitHub, call: Call) -> Reply:
    comment = _comment_of(fake, call)
    with fake.lock:
        del fake.comments[comment.id]
    return Reply(204)


@route("POST", "/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions")
def react(fake: FakeGitHub, call: Call) -> Reply:
    comment = _comment_of(fake, call)
    content = call.body["content"]
    mine = (fake.bot_login, content)
    existed = mine in comment.reactions
    if not existed:
        comment.reactions.append(mine)
    reaction_id = comment.id * 10 + comment.reactions.index(mine)
    return Reply(
        200 if existed else 201, fake.shapes.reaction(reaction_id, fake.bot_login, content)
    )


@route("GET", "/repos/{owner}/{repo}/collaborators/{username}/permission")
def collaborator_permission(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    login = call.params["username"]
    role = repo.collaborators.get(login)
    if role is None:
        if login not in fake._users and login != fake.bot_login:
            raise error(404, "Not Found")
        role = "none"
    data = fake.shapes.permission(login, role)
    if role == "none":
        data.update(permission="none", role_name="none")
    return Reply(200, data)
