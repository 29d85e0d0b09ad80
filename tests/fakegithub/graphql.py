"""GitHub's GraphQL endpoint, as much of it as ODW uses: one mutation per handler.

GitHub takes every GraphQL call as `POST /graphql` (`/api/graphql` on GitHub
Enterprise Server, where the fake serves it) with a JSON body `{query,
variables}`, and answers 200 even when the call failed, with the failure in
an `errors` list (https://docs.github.com/en/graphql/guides/forming-calls-with-graphql).
The fake reads the mutation's name from the query and dispatches on it
(`MUTATIONS`): a query it does not know is a violation, as an unknown REST
route is. Other helpers add their mutations to the same table.

Mutations: `minimizeComment` (ODW hides its own outdated notices the way bors
does: https://docs.github.com/en/graphql/reference/mutations#minimizecomment,
input `subjectId`, `classifier`; the payload's `minimizedComment` has
`isMinimized` and `minimizedReason`, which comes back lower-case whatever the
classifier's case, https://github.com/orgs/community/discussions/19865) and
`markPullRequestReadyForReview`. The endpoint is `/graphql` on github.com and
`/api/graphql` on GHES (PyGithub derives it from the REST base URL `/api/v3`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from werkzeug.wrappers import Request, Response

if TYPE_CHECKING:
    from tests.fakegithub.server import FakeGitHub

PATH = "/api/graphql"
CLASSIFIERS = frozenset({"SPAM", "ABUSE", "OFF_TOPIC", "OUTDATED", "DUPLICATE", "RESOLVED"})
_MUTATION = re.compile(r"^\s*mutation\b[^{]*\{\s*(\w+)")

Mutation = Callable[["FakeGitHub", "Any", dict[str, Any]], dict[str, Any]]
MUTATIONS: dict[str, Mutation] = {}


class GraphQLError(Exception):
    """One entry of the answer's `errors` (GitHub's `type` and `message`)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind, self.message = kind, message


def mutation(name: str) -> Callable[[Mutation], Mutation]:
    def register(fn: Mutation) -> Mutation:
        MUTATIONS[name] = fn
        return fn

    return register


def handle(fake: FakeGitHub, request: Request) -> Response:
    if request.method != "POST":
        return _answer({"message": "Not Found"}, 404)
    body: Any = None
    try:
        body = json.loads(request.get_data() or b"null")
        query = str(body["query"])
        variables = dict(body.get("variables") or {})
    except (ValueError, KeyError, TypeError):
        fake.log_request("POST", PATH, {}, 400, body)
        return _answer({"message": "Problems parsing JSON"}, 400)
    token = fake.tokens.get(request.headers.get("Authorization", "").partition(" ")[2])
    if token is None or token.expires_at <= fake.now():
        fake.log_request("POST", PATH, {}, 401, body)
        return _answer({"message": "Bad credentials"}, 401)
    found = _MUTATION.match(query)
    handler = MUTATIONS.get(found.group(1)) if found else None
    if found is None or handler is None:
        fake.record_violation(f"POST {PATH}: the fake does not implement {query[:80]!r}")
        fake.log_request("POST", PATH, {}, 200, body)
        return _answer({"errors": [{"type": "UNKNOWN", "message": "not in the fake"}]})
    try:
        data = {"data": {found.group(1): handler(fake, token, variables.get("input") or {})}}
    except GraphQLError as exc:
        data = {"data": {found.group(1): None}, "errors": [_error(exc)]}
    fake.log_request("POST", PATH, {}, 200, body)
    return _answer(data)


def _error(exc: GraphQLError) -> dict[str, Any]:
    return {"type": exc.kind, "path": [], "message": exc.message}


def _answer(data: Any, status: int = 200) -> Response:
    return Response(json.dumps(data), status, content_type="application/json; charset=utf-8")


@mutation("markPullRequestReadyForReview")
def mark_ready(fake: FakeGitHub, token: Any, given: dict[str, Any]) -> dict[str, Any]:
    """A draft becomes ready for review (https://docs.github.com/en/graphql/reference/pulls#markpullrequestreadyforreview):
    input `pullRequestId`, the pull request's `node_id` (`PR_<id>` in the fake's
    REST answers); an id that names nothing answers `NOT_FOUND` ("Could not
    resolve to a node with the global id of ..."), and a token without
    `pull_requests: write` on its repository `FORBIDDEN`
    (https://docs.github.com/en/graphql/guides/forming-calls-with-graphql, the
    error texts: belief, unchecked)."""
    node = str(given.get("pullRequestId") or "")
    pull = next((p for p in fake.pulls.values() if f"PR_{p.id}" == node), None)
    allowed = token.repositories or fake.installations[token.installation_id].repositories
    if pull is None or pull.repo not in allowed:
        raise GraphQLError(
            "NOT_FOUND", f"Could not resolve to a node with the global id of '{node}'."
        )
    if token.permissions.get("pull_requests") not in ("write", "admin"):
        raise GraphQLError("FORBIDDEN", "Resource not accessible by integration")
    with fake.lock:
        pull.draft = False
    return {"pullRequest": {"id": node, "number": pull.number, "isDraft": False}}


@mutation("minimizeComment")
def minimize_comment(fake: FakeGitHub, token: Any, given: dict[str, Any]) -> dict[str, Any]:
    """A comment hidden with a classifier (`IC_<id>` in the fake's REST answers); the
    token needs write access to the comment's issues or pull requests, as the
    REST edit does."""
    subject, classifier = given.get("subjectId"), given.get("classifier")
    if classifier not in CLASSIFIERS:
        raise GraphQLError("INVALID", f"Argument 'classifier' has an invalid value ({classifier})")
    number = str(subject or "").removeprefix("IC_")
    comment = fake.comments.get(int(number)) if number.isdigit() else None
    allowed = token.repositories or fake.installations[token.installation_id].repositories
    if comment is None or comment.repo not in allowed:
        raise GraphQLError(
            "NOT_FOUND", f"Could not resolve to a node with the global id of '{subject}'"
        )
    if "write" not in (token.permissions.get("issues"), token.permissions.get("pull_requests")):
        raise GraphQLError("FORBIDDEN", "Resource not accessible by integration")
    with fake.lock:
        comment.minimized = str(classifier).lower()
    return {"minimizedComment": {"isMinimized": True, "minimizedReason": comment.minimized}}
