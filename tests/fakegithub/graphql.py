"""GitHub's GraphQL endpoint, as little of it as ODW uses: `minimizeComment`.

ODW hides its own outdated notices the way bors does. GitHub's reference:
https://docs.github.com/en/graphql/reference/mutations#minimizecomment (input
`subjectId: ID!`, `classifier: ReportedContentClassifiers!`; the payload's
`minimizedComment` has `isMinimized` and `minimizedReason`). GraphQL answers
200 with `errors` for a bad query or an unknown node (`type: NOT_FOUND`,
https://docs.github.com/en/graphql/guides/forming-calls-with-graphql), and
`minimizedReason` comes back lower-case whatever the classifier's case
(https://github.com/orgs/community/discussions/19865). The endpoint is
`/graphql` on github.com and `/api/graphql` on GHES (PyGithub derives it from
the REST base URL `/api/v3`). The token needs write access to the comment's
issues or pull requests, as the REST edit does.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from werkzeug.wrappers import Request, Response

if TYPE_CHECKING:
    from tests.fakegithub.server import FakeGitHub

PATH = "/api/graphql"
CLASSIFIERS = frozenset({"SPAM", "ABUSE", "OFF_TOPIC", "OUTDATED", "DUPLICATE", "RESOLVED"})
_MUTATION = re.compile(r"^\s*mutation\b[^{]*\{\s*minimizeComment\s*\(\s*input\s*:\s*\$input\s*\)")


def _answer(status: int, body: Any) -> Response:
    return Response(json.dumps(body), status, content_type="application/json; charset=utf-8")


def _error(message: str, kind: str | None = None) -> dict[str, Any]:
    error: dict[str, Any] = {"message": message}
    if kind:
        error["type"] = kind
    return error


def handle(fake: FakeGitHub, request: Request) -> Response:
    if request.method != "POST":
        return _answer(404, {"message": "Not Found"})
    header = request.headers.get("Authorization", "")
    scheme, _, credential = header.partition(" ")
    token = fake.tokens.get(credential) if scheme.lower() in ("token", "bearer") else None
    if token is None or token.expires_at <= fake.now():
        return _answer(401, {"message": "Bad credentials"})
    try:
        body = json.loads(request.get_data() or b"{}")
    except ValueError:
        return _answer(400, {"message": "Problems parsing JSON"})
    query, variables = body.get("query") or "", body.get("variables") or {}
    fake._log("POST", "/graphql", {}, 200, body)
    if not _MUTATION.match(query):
        fake._violation(f"POST /graphql: the fake implements only minimizeComment: {query[:80]}")
        return _answer(200, {"errors": [_error("the fake implements only minimizeComment")]})
    given = variables.get("input") or {}
    subject, classifier = given.get("subjectId"), given.get("classifier")
    if classifier not in CLASSIFIERS:
        return _answer(
            200, {"errors": [_error(f"Argument 'classifier' has an invalid value ({classifier})")]}
        )
    number = str(subject or "").removeprefix("IC_")
    comment = fake.comments.get(int(number)) if number.isdigit() else None
    installation = fake.installations.get(token.installation_id)
    allowed = token.repositories or (installation.repositories if installation else [])
    writes = "write" in (token.permissions.get("issues"), token.permissions.get("pull_requests"))
    if comment is None or comment.repo not in allowed:
        return _answer(
            200,
            {
                "data": {"minimizeComment": None},
                "errors": [
                    _error(
                        f"Could not resolve to a node with the global id of '{subject}'",
                        "NOT_FOUND",
                    )
                ],
            },
        )
    if not writes:
        return _answer(
            200,
            {
                "data": {"minimizeComment": None},
                "errors": [_error("Resource not accessible by integration", "FORBIDDEN")],
            },
        )
    with fake.lock:
        comment.minimized = classifier.lower()
    return _answer(
        200,
        {
            "data": {
                "minimizeComment": {
                    "minimizedComment": {"isMinimized": True, "minimizedReason": comment.minimized}
                }
            }
        },
    )
