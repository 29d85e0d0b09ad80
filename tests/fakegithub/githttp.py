"""Git smart HTTP for the fake's bare repositories, through `git http-backend`.

Clients authenticate like on GitHub: basic auth `x-access-token:<token>`
with an installation token; pushing needs `contents: write`, and the push rules
(`push_rules.py`: rulesets, workflow files) refuse as GitHub does. A push sends a
`push` webhook per updated branch (and `synchronize` for its open PRs)."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

from werkzeug.wrappers import Request, Response

from tests.fakegithub import moves
from tests.fakegithub.push_rules import WORKFLOWS_ENV
from tests.fakegithub.server import LEVELS

if TYPE_CHECKING:
    from tests.fakegithub.server import FakeGitHub

CHALLENGE = {"WWW-Authenticate": 'Basic realm="GitHub"'}


def handle(fake: FakeGitHub, request: Request) -> Response:
    owner, _, rest = request.path.lstrip("/").partition("/")
    name, _, tail = rest.partition(".git/")
    full = f"{owner}/{name}"
    repo = fake.repos.get(full)
    moved = moves.git_redirect(fake, full, tail, request.query_string.decode())
    if moved is not None:
        return moved
    if repo is None:
        return Response("Repository not found.", 404)
    header = request.headers.get("Authorization", "")
    token = None
    if header.lower().startswith("basic "):
        user, _, secret = base64.b64decode(header[6:]).decode(errors="replace").partition(":")
        candidate = fake.token_for_git(secret)
        if user == "x-access-token" and candidate is not None:
            allowed = (
                candidate.repositories or fake.installations[candidate.installation_id].repositories
            )
            token = candidate if full in allowed else None
    if token is None:
        return Response("Authentication failed", 401, CHALLENGE)
    pushing = (
        "git-receive-pack" in request.path or request.args.get("service") == "git-receive-pack"
    )
    level = LEVELS.get(token.permissions.get("contents", ""), 0)
    if level < (2 if pushing else 1):
        return Response("Write access to repository not granted.", 403)
    before = repo.git.refs() if pushing and request.method == "POST" else None
    status, headers, body = repo.git.http_backend(
        fake.root,
        f"/{owner}/{name}.git/{tail}",
        request.method,
        request.query_string.decode(),
        request.headers.get("Content-Type", ""),
        request.get_data(),
        request.headers.get("Content-Encoding", ""),
        "x-access-token",
        # What the push rules' hook needs of the token (push_rules.py).
        {WORKFLOWS_ENV: token.permissions.get("workflows", "")},
    )
    if before is not None:
        after = repo.git.refs()
        for ref in sorted(set(before) | set(after)):
            if before.get(ref) != after.get(ref) and ref.startswith("refs/heads/"):
                zero = "0" * 40
                fake.webhooks.send(
                    "push",
                    None,
                    repo=repo,
                    ref=ref,
                    before=before.get(ref, zero),
                    after=after.get(ref, zero),
                )
                fake.head_moved(repo, ref.removeprefix("refs/heads/"))
    return Response(body, status, headers)
