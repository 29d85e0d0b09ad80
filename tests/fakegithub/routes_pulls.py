"""REST handlers: pull requests (squash merge with `sha`), contents and refs."""

from __future__ import annotations

from tests.fakegithub import state as s
from tests.fakegithub.limits import refuse_long_pull_body
from tests.fakegithub.paging import page
from tests.fakegithub.routes import repo_of
from tests.fakegithub.routes_protection import missing_checks
from tests.fakegithub.server import Call, FakeGitHub, Reply, error, route


def pull_of(fake: FakeGitHub, call: Call) -> tuple[s.Repository, s.PullRequest]:
    repo = repo_of(fake, call)
    pull = fake.pulls.get((repo.full_name, call.int("pull_number")))
    if pull is None:
        raise error(404, "Not Found")
    return repo, pull


def _branch(head: str, repo: s.Repository) -> str:
    owner, _, branch = head.rpartition(":")
    if owner and owner != repo.owner:
        raise error(422, "Validation Failed: forks are not part of the fake")
    return branch


@route("POST", "/repos/{owner}/{repo}/pulls")
def create_pull(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    body = call.body
    refuse_long_pull_body(body.get("body"))
    head = _branch(body["head"], repo)
    base = body["base"]
    if repo.git.sha(f"refs/heads/{head}") is None:
        raise error(422, f"Validation Failed: head {head} does not exist")
    if repo.git.sha(f"refs/heads/{base}") is None:
        raise error(422, f"Validation Failed: base {base} does not exist")
    for pull in fake.pulls.values():
        if (
            pull.repo == repo.full_name
            and pull.head == head
            and pull.base == base
            and pull.state == "open"
        ):
            raise error(
                422, f"Validation Failed: A pull request already exists for {repo.owner}:{head}."
            )
    with fake.lock:
        number = repo.next_number
        repo.next_number += 1
        pull = s.PullRequest(
            fake.next_id(),
            repo.full_name,
            number,
            body.get("title") or head,
            body.get("body") or "",
            head,
            base,
            bool(body.get("draft")),
            fake.bot_login,
            created_at=fake.now(),
        )
        fake.pulls[(repo.full_name, number)] = pull
    fake.webhooks.send("pull_request", "opened", pull=pull)
    return Reply(201, fake.shapes.pull(pull))


@route("GET", "/repos/{owner}/{repo}/pulls/{pull_number}")
def get_pull(fake: FakeGitHub, call: Call) -> Reply:
    return Reply(200, fake.shapes.pull(pull_of(fake, call)[1]))


@route("GET", "/repos/{owner}/{repo}/pulls")
def list_pulls(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    state = call.query.get("state", "open")
    pulls = [p for p in fake.pulls.values() if p.repo == repo.full_name]
    if state != "all":
        pulls = [p for p in pulls if p.state == state]
    if "head" in call.query:
        # `head` is `user:ref-name`: a fork's pull request has the fork's owner as
        # its head user, so it never matches the repository owner's branch of the
        # same name (REST "List pull requests", parameter `head`).
        owner, _, branch = call.query["head"].rpartition(":")
        owner = owner or repo.owner
        pulls = [
            p
            for p in pulls
            if p.head == branch and (p.head_repo or repo.full_name).split("/")[0] == owner
        ]
    if "base" in call.query:
        pulls = [p for p in pulls if p.base == call.query["base"]]
    pulls.sort(key=lambda p: -p.number)
    chunk, links = page(fake, call, pulls)
    return Reply(200, [fake.shapes.pull(p, simple=True) for p in chunk], links)


@route("PATCH", "/repos/{owner}/{repo}/pulls/{pull_number}")
def update_pull(fake: FakeGitHub, call: Call) -> Reply:
    _, pull = pull_of(fake, call)
    body = call.body or {}
    refuse_long_pull_body(body.get("body"))
    with fake.lock:
        for name in ("title", "body"):
            if name in body:
                setattr(pull, name, body[name])
        closing = body.get("state") == "closed" and pull.state == "open"
        if body.get("state") in ("open", "closed") and not pull.merged:
            pull.state = body["state"]
    fake.webhooks.send("pull_request", "closed" if closing else "edited", pull=pull)
    return Reply(200, fake.shapes.pull(pull))


@route("PUT", "/repos/{owner}/{repo}/pulls/{pull_number}/merge")
def merge_pull(fake: FakeGitHub, call: Call) -> Reply:
    repo, pull = pull_of(fake, call)
    body = call.body or {}
    with fake.lock:
        head_sha = repo.git.sha(f"refs/heads/{pull.head}")
        base_sha = repo.git.sha(f"refs/heads/{pull.base}")
        if pull.merged or pull.state != "open":
            raise error(405, "Pull Request is not mergeable")
        if pull.draft:
            raise error(405, "Pull Request is still a draft")
        if body.get("sha") and body["sha"] != head_sha:
            raise error(409, "Head branch was modified. Review and try the merge again.")
        method = body.get("merge_method", "merge")
        if method != "squash":
            raise error(
                405, f"Merge method {method} is not allowed on this repository (the fake squashes)"
            )
        if not repo.allow_squash_merge:
            # GitHub's answer on every squash merge while the setting is off (reported
            # from github.com: akuity/kargo#6490, Mergifyio/mergify#1812; "Merge a pull
            # request" documents 405 "if merge cannot be performed").
            raise error(405, "Squash merges are not allowed on this repository.")
        title = body.get("commit_title") or f"{pull.title} (#{pull.number})"
        message = title + ("\n\n" + body["commit_message"] if body.get("commit_message") else "")
        assert head_sha and base_sha
        if pull.base in repo.protection:
            missing = missing_checks(fake, repo, pull.base, head_sha)
            if missing:
                raise error(405, f'Required status check "{missing[0]}" is expected.')
        squashed = repo.git.squash(base_sha, head_sha, message)
        if squashed is None or not repo.git.set_ref(f"refs/heads/{pull.base}", squashed, base_sha):
            raise error(405, "Pull Request is not mergeable")
        pull.merged = True
        pull.merged_by = fake.bot_login
        pull.state = "closed"
        pull.merge_commit_sha = squashed
    fake.webhooks.send(
        "push", None, repo=repo, ref=f"refs/heads/{pull.base}", before=base_sha, after=squashed
    )
    fake.webhooks.send("pull_request", "closed", pull=pull)
    return Reply(
        200, {"sha": squashed, "merged": True, "message": "Pull Request successfully merged"}
    )


# -- contents and refs -------------------------------------------------------------


@route("GET", "/repos/{owner}/{repo}/contents/{path}")
def get_contents(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    ref = call.query.get("ref", repo.default_branch)
    sha = repo.git.sha(ref) or repo.git.sha(f"refs/heads/{ref}")
    path = call.params["path"].strip("/")
    blob = repo.git.show(sha, path) if sha else None
    if blob is None or sha is None:
        raise error(404, "Not Found")
    return Reply(200, fake.shapes.content(repo, path, sha, blob))


@route("GET", "/repos/{owner}/{repo}/git/ref/{ref}")
def get_ref(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    ref = "refs/" + call.params["ref"]
    sha = repo.git.refs().get(ref)
    if sha is None:
        raise error(404, "Not Found")
    return Reply(200, fake.shapes.git_ref(repo, ref, sha))


@route("POST", "/repos/{owner}/{repo}/git/refs")
def create_ref(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    ref, sha = call.body["ref"], call.body["sha"]
    if not ref.startswith("refs/") or ref.count("/") < 2:
        raise error(422, "Reference name must start with 'refs/' and have at least two slashes")
    with fake.lock:
        if ref in repo.git.refs():
            # A recorded exchange: 422 {"message": "Reference already exists"}
            # (https://github.com/renovatebot/renovate/issues/20281).
            raise error(422, "Reference already exists")
        if repo.git.sha(sha) != sha:
            raise error(422, "Object does not exist")
        repo.git.set_ref(ref, sha)
    if ref.startswith("refs/heads/"):
        fake.webhooks.send("push", None, repo=repo, ref=ref, before="0" * 40, after=sha)
    return Reply(201, fake.shapes.git_ref(repo, ref, sha))


@route("DELETE", "/repos/{owner}/{repo}/git/refs/{ref}")
def delete_ref(fake: FakeGitHub, call: Call) -> Reply:
    """204, and a `push` with `deleted: true`; a ref that is not there answers 422
    "Reference does not exist" (https://docs.github.com/rest/git/refs#delete-a-reference)."""
    repo = repo_of(fake, call)
    ref = "refs/" + call.params["ref"]
    with fake.lock:
        old = repo.git.refs().get(ref)
        if old is None:
            raise error(422, "Reference does not exist")
        repo.git.git("update-ref", "-d", ref, old)
    fake.webhooks.send("push", None, repo=repo, ref=ref, before=old, after="0" * 40)
    return Reply(204)


@route("PATCH", "/repos/{owner}/{repo}/git/refs/{ref}")
def update_ref(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    ref = "refs/" + call.params["ref"]
    sha = call.body["sha"]
    with fake.lock:
        old = repo.git.refs().get(ref)
        if old is None:
            raise error(422, "Reference does not exist")
        if repo.git.sha(sha) != sha:
            raise error(422, "Object does not exist")
        if not call.body.get("force") and not repo.git.is_ancestor(old, sha):
            raise error(422, "Update is not a fast forward")
        repo.git.set_ref(ref, sha, old)
    fake.webhooks.send("push", None, repo=repo, ref=ref, before=old, after=sha)
    if ref.startswith("refs/heads/"):
        fake.head_moved(repo, ref.removeprefix("refs/heads/"))
    return Reply(200, fake.shapes.git_ref(repo, ref, sha))
