"""Issue and pull request comments, reactions and collaborator permissions."""

from __future__ import annotations

from typing import Any

from github.IssueComment import IssueComment

from app.core.github_limits import BODY_LIMIT, fit
from app.github.protocols import Comment, Permission
from app.github.transport import Transport

COMMENT_PERMISSIONS = {"issues": "write", "pull_requests": "write"}
REACTION_PERMISSIONS = {"issues": "write", "pull_requests": "write"}
PERMISSION_PERMISSIONS = {"metadata": "read"}
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")


def _comment(data: dict[str, Any]) -> Comment:
    user = data.get("user") or {}
    return Comment(
        id=int(data["id"]),
        body=data.get("body") or "",
        author=user.get("login", ""),
        author_type=user.get("type", ""),
        html_url=data.get("html_url", ""),
        node_id=data.get("node_id") or "",
    )


class GitHubComments:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def list_comments(self, number: int) -> list[Comment]:
        def fetch() -> list[Comment]:
            return [_comment(c) for c in self._t.paginate(f"/issues/{number}/comments")]

        return self._t.call("comments.list", fetch)

    def create_comment(self, number: int, body: str) -> Comment:
        body = fit(body, BODY_LIMIT)
        return self._t.call(
            "comments.create",
            lambda: _comment(self._t.repo.get_issue(number).create_comment(body).raw_data),
            kind="create",
            reread=lambda: next(
                (c for c in reversed(self.list_comments(number)) if c.body == body), None
            ),
        )

    def edit_comment(self, comment_id: int, body: str) -> Comment:
        body = fit(body, BODY_LIMIT)

        def edit() -> Comment:
            _, data = self._t.request(
                "PATCH", f"/issues/comments/{comment_id}", body={"body": body}
            )
            return _comment(data)

        return self._t.call("comments.edit", edit, kind="update")

    def find_marked_comment(self, number: int, marker: str, author: str) -> Comment | None:
        """The newest comment by `author` whose first line is `marker` (a hidden
        HTML comment): only the App's own comments are trusted to carry it."""
        for comment in reversed(self.list_comments(number)):
            if comment.author == author and comment.body.startswith(marker):
                return comment
        return None

    def minimize_comment(self, node_id: str) -> None:
        """Hide one of ODW's comments as outdated, as bors does: GraphQL's
        `minimizeComment` (https://docs.github.com/en/graphql/reference/mutations#minimizecomment;
        REST has no such call). Minimising twice is harmless."""

        def minimize() -> None:
            self._t.github.requester.graphql_named_mutation(
                "minimizeComment",
                {"subjectId": node_id, "classifier": "OUTDATED"},
                "minimizedComment { isMinimized minimizedReason }",
            )

        self._t.call("comments.minimize", minimize, kind="update")


class GitHubReactions:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def react_to_comment(self, comment_id: int, content: str) -> None:
        if content not in REACTIONS:
            raise ValueError(f"unknown reaction {content!r}; one of {', '.join(REACTIONS)}")

        def react() -> None:
            comment = IssueComment(
                self._t.github.requester,
                url=f"{self._t.repo.url}/issues/comments/{comment_id}",
            )
            comment.create_reaction(content)

        # Adding the same reaction twice is harmless (GitHub answers 200).
        self._t.call("reactions.create", react, kind="update")


class GitHubPermissions:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def permission_of(self, username: str) -> Permission:
        def fetch() -> Permission:
            _, data = self._t.request("GET", f"/collaborators/{username}/permission")
            return Permission(data["permission"], data.get("role_name") or data["permission"])

        return self._t.call("permissions.get", fetch)
