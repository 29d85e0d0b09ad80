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

`updateIssueComment`, `updateCheckRun` and `updatePullRequest` (its `state: CLOSED` closes, as
REST's `PATCH .../pulls/{n}` does: https://docs.github.com/en/graphql/reference/input-objects#updatepullrequestinput)
change what the REST routes change, under the same limits, and send the same
webhooks. A document may hold several mutations: GitHub runs top-level
mutation fields one after another, in order, and answers each under its alias
(https://spec.graphql.org/October2021/#sec-Mutation, "executed serially"); a
field that fails is `null` with its error, and the others still run.

Every document is parsed with graphql-core and, where `make oracles`
installed it, validated against GitHub's published schema
(`@octokit/graphql-schema`'s introspection JSON): a field, argument or input
GitHub does not have is a violation, as an unknown REST route is.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import graphql as gql
from werkzeug.wrappers import Request, Response

from tests.fakegithub.checkruns import refuse_reopening
from tests.fakegithub.limits import refuse_long_comment, refuse_long_output, refuse_long_pull_body
from tests.fakegithub.oracles import GRAPHQL_SCHEMA
from tests.fakegithub.routes import apply_check_fields
from tests.fakegithub.server import Reply

if TYPE_CHECKING:
    from tests.fakegithub.server import FakeGitHub

PATH = "/api/graphql"
CLASSIFIERS = frozenset({"SPAM", "ABUSE", "OFF_TOPIC", "OUTDATED", "DUPLICATE", "RESOLVED"})

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
    fields, problem = _mutations(query, variables)
    unknown = [f.name.value for f in fields if f.name.value not in MUTATIONS]
    if problem is not None or unknown:
        what = problem or f"the fake does not implement {', '.join(unknown)}"
        fake.record_violation(f"POST {PATH}: {what}: {query[:80]!r}")
        fake.log_request("POST", PATH, {}, 200, body)
        return _answer({"errors": [{"type": "UNKNOWN", "message": what}]})
    data: dict[str, Any] = {}
    errors: list[dict[str, Any]] = []
    for field in fields:  # serially, in order
        key = field.alias.value if field.alias else field.name.value
        given = {
            a.name.value: gql.value_from_ast_untyped(a.value, variables) for a in field.arguments
        }
        try:
            data[key] = MUTATIONS[field.name.value](fake, token, dict(given.get("input") or {}))
        except GraphQLError as exc:
            data[key] = None
            errors.append(_error(exc, key))
    fake.log_request("POST", PATH, {}, 200, body)
    return _answer({"data": data, **({"errors": errors} if errors else {})})


def _mutations(query: str, variables: dict[str, Any]) -> tuple[list[Any], str | None]:
    """The document's top-level mutation fields, or why it is not one GitHub takes."""
    try:
        document = gql.parse(query)
    except gql.GraphQLError as exc:
        return [], f"not GraphQL: {exc.message}"
    schema = _schema()
    if schema is not None:
        invalid = gql.validate(schema, document)
        if invalid:
            return [], "; ".join(e.message for e in invalid[:3])
    operations = [d for d in document.definitions if isinstance(d, gql.OperationDefinitionNode)]
    if len(operations) != 1 or operations[0].operation != gql.OperationType.MUTATION:
        return [], "not one mutation"
    fields = [f for f in operations[0].selection_set.selections if isinstance(f, gql.FieldNode)]
    return fields, None


@functools.cache
def _schema() -> gql.GraphQLSchema | None:
    """GitHub's schema from its introspection JSON, once per process; None when
    `make oracles` has not installed it. GitHub deprecates some fields on the
    types that implement an interface whose own field is not deprecated, which
    graphql-core refuses as an invalid schema: the deprecation marks (and only
    they) are dropped before it is built."""
    if not GRAPHQL_SCHEMA.is_file():
        return None
    published = json.loads(GRAPHQL_SCHEMA.read_text("utf-8"))
    introspection = published.get("data", published)
    for kind in introspection["__schema"]["types"]:
        for field in kind.get("fields") or ():
            field["isDeprecated"], field["deprecationReason"] = False, None
    return gql.build_client_schema(introspection)


def _error(exc: GraphQLError, key: str) -> dict[str, Any]:
    return {"type": exc.kind, "path": [key], "message": exc.message}


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


def _allowed(fake: FakeGitHub, token: Any) -> Any:
    return token.repositories or fake.installations[token.installation_id].repositories


def _unresolved(node: object) -> GraphQLError:
    return GraphQLError("NOT_FOUND", f"Could not resolve to a node with the global id of '{node}'.")


def _unprocessable(refused: Reply) -> GraphQLError:
    """A REST limit's 422, as GraphQL reports a refused input (its error's message)."""
    errors = refused.body.get("errors") if isinstance(refused.body, dict) else None
    return GraphQLError("UNPROCESSABLE", str(errors[0]["message"] if errors else refused.body))


@mutation("updateIssueComment")
def update_issue_comment(fake: FakeGitHub, token: Any, given: dict[str, Any]) -> dict[str, Any]:
    """A comment's new body (https://docs.github.com/en/graphql/reference/mutations#updateissuecomment,
    input `id`, `body`): what `PATCH .../issues/comments/{id}` does, under its
    size limit, with the same `issue_comment` `edited` webhook."""
    node = str(given.get("id") or "")
    number = node.removeprefix("IC_")
    comment = fake.comments.get(int(number)) if number.isdigit() else None
    if comment is None or comment.repo not in _allowed(fake, token):
        raise _unresolved(node)
    if "write" not in (token.permissions.get("issues"), token.permissions.get("pull_requests")):
        raise GraphQLError("FORBIDDEN", "Resource not accessible by integration")
    try:
        refuse_long_comment(given.get("body"))
    except Reply as refused:  # the REST route's 422
        raise _unprocessable(refused) from refused
    with fake.lock:
        comment.body = str(given.get("body") or "")
        comment.updated_at = fake.now()
        comment.edits += 1
    fake.webhooks.send("issue_comment", "edited", comment=comment)
    return {"issueComment": {"id": node}}


@mutation("updatePullRequest")
def update_pull_request(fake: FakeGitHub, token: Any, given: dict[str, Any]) -> dict[str, Any]:
    """A pull request's title, body or state (OPEN, CLOSED): what `PATCH
    .../pulls/{n}` does, under its body limit, with the same `pull_request`
    webhook (`closed` when it closes, else `edited`)."""
    node = str(given.get("pullRequestId") or "")
    pull = next((p for p in fake.pulls.values() if f"PR_{p.id}" == node), None)
    if pull is None or pull.repo not in _allowed(fake, token):
        raise _unresolved(node)
    if token.permissions.get("pull_requests") not in ("write", "admin"):
        raise GraphQLError("FORBIDDEN", "Resource not accessible by integration")
    try:
        refuse_long_pull_body(given.get("body"))
    except Reply as refused:  # the REST route's 422
        raise _unprocessable(refused) from refused
    state = {"OPEN": "open", "CLOSED": "closed"}.get(str(given.get("state") or ""))
    with fake.lock:
        for name in ("title", "body"):
            if given.get(name) is not None:
                setattr(pull, name, given[name])
        closing = state == "closed" and pull.state == "open"
        if state is not None and not pull.merged:
            pull.state = state
    fake.webhooks.send("pull_request", "closed" if closing else "edited", pull=pull)
    return {"pullRequest": {"id": node, "state": pull.state.upper()}}


@mutation("updateCheckRun")
def update_check_run(fake: FakeGitHub, token: Any, given: dict[str, Any]) -> dict[str, Any]:
    """A check run's status, conclusion, output, details URL, external id or buttons
    (https://docs.github.com/en/graphql/reference/mutations#updatecheckrun, input
    `repositoryId` (`R_<id>`) and `checkRunId` (`CR_<id>`), enum values upper-case):
    what `PATCH .../check-runs/{id}` does, under its output limits and its rule
    that a completed check run is never reopened, with the same `check_run`
    `completed` webhook. Only a GitHub App's token with `checks: write` may."""
    repo_node, node = str(given.get("repositoryId") or ""), str(given.get("checkRunId") or "")
    number = node.removeprefix("CR_")
    run = fake.check_runs.get(int(number)) if number.isdigit() else None
    repo = fake.repos.get(run.repo) if run is not None else None
    if run is None or repo is None or repo_node != f"R_{repo.id}":
        raise _unresolved(node)
    if run.repo not in _allowed(fake, token):
        raise _unresolved(node)
    if token.permissions.get("checks") != "write":
        raise GraphQLError("FORBIDDEN", "Resource not accessible by integration")
    body: dict[str, Any] = {}
    for ours, theirs in (("details_url", "detailsUrl"), ("external_id", "externalId")):
        if given.get(theirs) is not None:
            body[ours] = given[theirs]
    for name in ("status", "conclusion"):
        if given.get(name) is not None:
            body[name] = str(given[name]).lower()
    if given.get("output") is not None:
        body["output"] = dict(given["output"])
    if given.get("actions") is not None:
        body["actions"] = list(given["actions"])
    try:
        refuse_long_output(body.get("output"))
        with fake.lock:
            refuse_reopening(run, body)
            was = run.status
            apply_check_fields(run, body, fake.now())
            run.updates += 1
    except Reply as refused:
        raise _unprocessable(refused) from refused
    if run.status == "completed" and was != "completed":
        fake.webhooks.send("check_run", "completed", check_run=run)
    return {"checkRun": {"id": node}}
