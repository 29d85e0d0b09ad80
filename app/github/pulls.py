"""Pull requests, and contents and refs at pinned SHAs."""

from __future__ import annotations

import base64
import logging
from typing import Any

from github.GithubObject import NotSet

from app.core.github_limits import BODY_LIMIT, fit
from app.core.ownership import PullFacts, foreign_pull
from app.github.errors import (
    FileTooLarge,
    GitHubError,
    HeadMoved,
    MergeMethodNotAllowed,
    NotFound,
    NotMergeable,
    Unprocessable,
)
from app.github.protocols import MergeResult, PullRequest
from app.github.transport import Transport

log = logging.getLogger("odw.github")

PULL_PERMISSIONS = {"pull_requests": "write", "contents": "read"}
MERGE_PERMISSIONS = {"pull_requests": "write", "contents": "write"}
READ_PERMISSIONS = {"contents": "read"}
REF_PERMISSIONS = {"contents": "write"}
# GitHub's 405 when the repository's settings disallow the merge method; it answers
# the same every time ("Squash merges are not allowed on this repository.", reported
# from github.com in akuity/kargo#6490 and Mergifyio/mergify#1812).
_METHOD_REFUSED = "merges are not allowed on this repository"


def _pull(data: dict[str, Any]) -> PullRequest:
    return PullRequest(
        number=int(data["number"]),
        state=data["state"],
        draft=bool(data.get("draft")),
        merged=bool(data.get("merged") or data.get("merged_at")),
        title=data.get("title") or "",
        body=data.get("body") or "",
        head_ref=data["head"]["ref"],
        head_sha=data["head"]["sha"],
        base_ref=data["base"]["ref"],
        html_url=data.get("html_url", ""),
        merge_commit_sha=data.get("merge_commit_sha"),
        head_repo=(data["head"].get("repo") or {}).get("full_name"),
        author=(data.get("user") or {}).get("login"),
        node_id=str(data.get("node_id") or ""),
        base_repo_node=str((data["base"].get("repo") or {}).get("node_id") or ""),
    )


class GitHubPulls:
    def __init__(self, transport: Transport, merging: Transport | None = None) -> None:
        self._t = transport
        self._merging = merging or transport  # merging needs `contents: write` too

    def create_pull(
        self, head: str, base: str, title: str, body: str, *, draft: bool = True
    ) -> PullRequest:
        body = fit(body, BODY_LIMIT)
        return self._t.call(
            "pulls.create",
            lambda: _pull(
                self._t.repo.create_pull(
                    base=base, head=head, title=title, body=body, draft=draft
                ).raw_data
            ),
            kind="create",
            reread=lambda: self.find_pull(head, base),
        )

    def get_pull(self, number: int) -> PullRequest:
        return self._t.call(
            "pulls.get", lambda: _pull(self._t.request("GET", f"/pulls/{number}")[1])
        )

    def find_pull(self, head: str, base: str) -> PullRequest | None:
        """ODW's own pull request on `head` into `base`: anyone may open one from a
        branch of that name (a writer here, or a fork whose owner shares the
        name), and none of theirs is ever adopted (`app.core.ownership`)."""
        owner = self._t.repository.split("/", 1)[0]
        bot = self._t.ctx.bot_login

        def find() -> PullRequest | None:
            _, data = self._t.request(
                "GET",
                "/pulls",
                params={"head": f"{owner}:{head}", "base": base, "state": "all", "per_page": 10},
            )
            pulls = []
            for p in map(_pull, data or []):
                facts = PullFacts(p.number, p.head_ref, p.head_repo, p.author)
                why = foreign_pull(facts, repository=self._t.repository, branch=head, bot_login=bot)
                if why is None:
                    pulls.append(p)
                else:
                    log.info("pull request on %s not adopted: %s", head, why)
            open_first = sorted(pulls, key=lambda p: (p.state != "open", -p.number))
            return open_first[0] if open_first else None

        return self._t.call("pulls.find", find)

    def update_pull(
        self,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        state: str | None = None,
    ) -> PullRequest:
        body = fit(body, BODY_LIMIT) if body is not None else None
        changes = {k: v for k, v in (("title", title), ("body", body), ("state", state)) if v}

        def update() -> PullRequest:
            return _pull(self._t.request("PATCH", f"/pulls/{number}", body=changes)[1])

        return self._t.call("pulls.update", update, kind="update")

    def mark_ready(self, node_id: str) -> None:
        """GraphQL `markPullRequestReadyForReview` (REST has no way to undo a draft:
        https://docs.github.com/en/graphql/reference/pulls#markpullrequestreadyforreview).
        PyGithub posts it to `/graphql` beside the REST root (`/api/graphql` on
        GitHub Enterprise Server); an `errors` answer is raised as a `GitHubError`."""

        def ready() -> None:
            self._t.github.requester.graphql_named_mutation(
                "markPullRequestReadyForReview",
                {"pullRequestId": node_id},
                "pullRequest { isDraft }",
            )

        self._t.call("pulls.ready", ready, kind="update")

    def merge_pull(
        self, number: int, sha: str, *, title: str | None = None, message: str | None = None
    ) -> MergeResult:
        """Squash-merge exactly `sha`; 405 (not mergeable, or squash merging disallowed
        by the repository's settings) and 409 (head moved) are typed."""

        def merge() -> MergeResult:
            status = self._merging.repo.get_pull(number).merge(
                commit_title=title or NotSet,
                commit_message=message or NotSet,
                merge_method="squash",
                sha=sha,
            )
            return MergeResult(status.sha, status.merged, status.message)

        def merged_already() -> MergeResult | None:
            _, data = self._merging.request("GET", f"/pulls/{number}")
            if data.get("merged") and data.get("merge_commit_sha"):
                return MergeResult(data["merge_commit_sha"], True, "merged (found on re-read)")
            return None

        try:
            return self._merging.call("pulls.merge", merge, kind="update", reread=merged_already)
        except GitHubError as exc:
            if exc.status == 405 and _METHOD_REFUSED in exc.reason.lower():
                raise MergeMethodNotAllowed(exc.operation, 405, exc.reason) from None
            if exc.status == 405:
                raise NotMergeable(exc.operation, 405, exc.reason) from None
            if exc.status == 409:
                raise HeadMoved(exc.operation, 409, exc.reason) from None
            raise


class GitHubContents:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def file_at(self, path: str, sha: str) -> bytes | None:
        """A file's bytes at a pinned commit, or None when it does not exist there."""

        def read() -> bytes:
            content = self._t.repo.get_contents(path, ref=sha)
            if isinstance(content, list):
                raise NotFound("contents.get", 404, f"{path} is a directory")
            if content.encoding == "base64" and content.content is not None:
                return base64.b64decode(content.content)
            if content.encoding == "none":
                # Over 1 MB GitHub sends no content in this form (docs: "Get
                # repository content"); ODW reads no file that large.
                raise FileTooLarge(
                    "contents.get",
                    200,
                    f"{path} is {content.size} bytes, over the 1 MB GitHub returns "
                    "through its contents API; keep it under 1 MB",
                )
            raise GitHubError("contents.get", 200, f"{path}: unknown encoding {content.encoding!r}")

        try:
            return self._t.call("contents.get", read)
        except NotFound:
            return None

    def default_branch(self) -> str:
        """The repository's default branch, as GitHub says now."""

        def read() -> str:
            _, data = self._t.request("GET", "")
            return str(data["default_branch"])

        return self._t.call("repos.get", read)

    def allows_squash_merge(self) -> bool | None:
        """The repository's `allow_squash_merge` setting; None when GitHub does not
        say (the field is only shown to tokens that may change the repository)."""

        def read() -> bool | None:
            _, data = self._t.request("GET", "")
            value = data.get("allow_squash_merge")
            return value if isinstance(value, bool) else None

        return self._t.call("repos.get", read)

    def branch_sha(self, branch: str) -> str | None:
        def read() -> str:
            _, data = self._t.request("GET", f"/git/ref/heads/{branch}")
            return str(data["object"]["sha"])

        try:
            return self._t.call("refs.get", read)
        except NotFound:
            return None

    def create_branch(self, branch: str, sha: str) -> None:
        """Create `branch` at `sha`; done already (after a crash or a lost answer)
        counts as done, a branch elsewhere is an error."""

        def there() -> bool | None:
            return True if self.branch_sha(branch) == sha else None

        try:
            self._t.call(
                "refs.create",
                lambda: bool(self._t.repo.create_git_ref(f"refs/heads/{branch}", sha)),
                kind="update",
                reread=there,
            )
        except Unprocessable:
            if there() is None:
                raise

    def delete_branch(self, branch: str) -> None:
        """Delete `branch`; already gone counts as done (`make live-check` cleans up)."""
        try:
            self._t.call(
                "refs.delete",
                lambda: self._t.request("DELETE", f"/git/refs/heads/{branch}"),
                kind="update",
            )
        except Unprocessable:
            # GitHub answers 422 "Reference does not exist" for a ref already gone.
            if self.branch_sha(branch) is not None:
                raise

    def move_branch(self, branch: str, sha: str, *, force: bool = False) -> None:
        self._t.call(
            "refs.update",
            lambda: self._t.request(
                "PATCH", f"/git/refs/heads/{branch}", body={"sha": sha, "force": force}
            ),
            kind="update",
        )
