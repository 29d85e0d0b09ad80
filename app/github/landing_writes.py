"""A landing's writes to GitHub in one GraphQL request.

When a task's squash lands by push, its views change at once: the status
comment says "landed", the draft pull request is marked ready and closed, its
check run concludes, and the run's check on the old base head concludes as
the run moves on. GitHub runs a document's mutation fields one after another,
in order (https://spec.graphql.org/October2021/#sec-Mutation), answering each
under its alias, a refused one as `null` with its error while the rest still
run; so these writes cost one request, and each part carries the REST write
that does it again should GitHub refuse that part.

The token holds what the parts need: `checks`, `issues` and `pull_requests`
write.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.core.github_limits import BODY_LIMIT, fit
from app.github.errors import GitHubError
from app.github.protocols import CheckRunFields
from app.github.transport import Transport

log = logging.getLogger("odw.github")

PERMISSIONS = {"checks": "write", "issues": "write", "pull_requests": "write"}


@dataclass(frozen=True)
class _Part:
    alias: str
    field: str  # the mutation field, its arguments naming `$<alias>_<name>` variables
    variables: dict[str, tuple[str, Any]]  # name -> (GraphQL type, value)
    again: Callable[[], object]  # the REST write that does this part, should it be refused


@dataclass
class LandingWrites:
    """The parts of one request, in the order GitHub will run them."""

    parts: list[_Part] = field(default_factory=list)

    def _add(
        self,
        field_name: str,
        selection: str,
        inputs: dict[str, tuple[str, Any]],
        again: Callable[[], object],
    ) -> None:
        alias = f"w{len(self.parts)}"
        args = ", ".join(f"{name}: ${alias}_{name}" for name in inputs)
        variables = {f"{alias}_{name}": typed for name, typed in inputs.items()}
        text = f"{alias}: {field_name}(input: {{{args}}}) {{ {selection} }}"
        self.parts.append(_Part(alias, text, variables, again))

    def edit_comment(self, node: str, body: str, again: Callable[[], object]) -> None:
        """https://docs.github.com/en/graphql/reference/mutations#updateissuecomment"""
        inputs = {"id": ("ID!", node), "body": ("String!", fit(body, BODY_LIMIT))}
        self._add("updateIssueComment", "issueComment { id }", inputs, again)

    def mark_ready(self, pull: str, again: Callable[[], object]) -> None:
        """https://docs.github.com/en/graphql/reference/mutations#markpullrequestreadyforreview"""
        self._add("markPullRequestReadyForReview", "pullRequest { isDraft }",
                  {"pullRequestId": ("ID!", pull)}, again)  # fmt: skip

    def close_pull(self, pull: str, body: str, again: Callable[[], object]) -> None:
        """https://docs.github.com/en/graphql/reference/mutations#updatepullrequest"""
        inputs = {
            "pullRequestId": ("ID!", pull),
            "body": ("String", fit(body, BODY_LIMIT)),
            "state": ("PullRequestUpdateState", "CLOSED"),
        }
        self._add("updatePullRequest", "pullRequest { state }", inputs, again)

    def update_check(
        self, repository: str, check: str, fields: CheckRunFields, again: Callable[[], object]
    ) -> None:
        """https://docs.github.com/en/graphql/reference/mutations#updatecheckrun: REST's
        fields in GraphQL's names (enum values upper-case)."""
        inputs: dict[str, tuple[str, Any]] = {
            "repositoryId": ("ID!", repository),
            "checkRunId": ("ID!", check),
        }
        if fields.status is not None:
            inputs["status"] = ("RequestableCheckStatusState", fields.status.upper())
        if fields.conclusion is not None:
            inputs["conclusion"] = ("CheckConclusionState", fields.conclusion.upper())
        if fields.details_url is not None:
            inputs["detailsUrl"] = ("URI", fields.details_url)
        if fields.external_id is not None:
            inputs["externalId"] = ("String", fields.external_id)
        if fields.title is not None or fields.summary is not None:
            output = {"title": fields.title or "", "summary": fields.summary or ""}
            if fields.text is not None:
                output["text"] = fields.text
            inputs["output"] = ("CheckRunOutput", output)
        if fields.actions is not None:
            actions = [
                {"label": a.label, "description": a.description, "identifier": a.identifier}
                for a in fields.actions
            ]
            inputs["actions"] = ("[CheckRunAction!]", actions)
        self._add("updateCheckRun", "checkRun { id }", inputs, again)

    def document(self) -> tuple[str, dict[str, Any]]:
        """The mutation document and its variables."""
        declared = [
            f"${name}: {kind}" for part in self.parts for name, (kind, _) in part.variables.items()
        ]
        values = {name: v for part in self.parts for name, (_, v) in part.variables.items()}
        body = " ".join(part.field for part in self.parts)
        return f"mutation({', '.join(declared)}) {{ {body} }}", values


def send(transport: Transport, writes: LandingWrites) -> int:
    """Send the writes as one request; a part GitHub refused, or all of them when
    the request itself failed, is done again its REST way. The number of parts
    done again."""
    if not writes.parts:
        return 0
    query, variables = writes.document()

    def request() -> dict[str, Any]:
        requester = transport.github.requester
        _, data = requester.requestJsonAndCheck(
            "POST", requester.graphql_url, input={"query": query, "variables": variables}
        )
        return data or {}

    try:
        answer = transport.call("graphql.landing", request, kind="update")
    except GitHubError as exc:
        log.info("the landing's one request failed (%s): each write is done again", exc)
        refused = list(writes.parts)
    else:
        done = answer.get("data") or {}
        refused = [part for part in writes.parts if done.get(part.alias) is None]
        for error in answer.get("errors") or ():
            log.info("the landing's request: GitHub refused a part: %s", error.get("message"))
    for part in refused:
        part.again()
    return len(refused)
