"""Typed errors from the GitHub boundary. Messages name the operation and
GitHub's own message, never a token or an Authorization header."""

from __future__ import annotations


class GitHubError(Exception):
    """A request GitHub refused or could not answer; `status` is 0 without a response."""

    def __init__(self, operation: str, status: int, message: str) -> None:
        self.operation = operation
        self.status = status
        self.reason = message
        super().__init__(f"GitHub {operation}: {status or 'no response'} {message}".rstrip())


class NotFound(GitHubError):
    """404: the resource is gone, or the installation cannot see it."""


class Unauthorized(GitHubError):
    """401: the token or App JWT was refused (the cached token is dropped)."""


class Forbidden(GitHubError):
    """403 that is not a rate limit: the installation lacks a permission."""


class Unprocessable(GitHubError):
    """422 (or 400): GitHub rejected the request body."""


class NotMergeable(GitHubError):
    """405 on merge: the pull request cannot be merged as it stands."""


class HeadMoved(GitHubError):
    """409 on merge: the head is no longer the SHA that was verified."""


class RateLimited(GitHubError):
    """A rate limit outlasted the retry budget."""


class GitHubUnavailable(GitHubError):
    """5xx or connection failures outlasted the retry budget."""


class WriteOutcomeUnknown(GitHubError):
    """A write may or may not have happened and re-reading could not tell."""


class ArtifactExpired(NotFound):
    """410: the artifact passed its retention (listed with `expired: true`)."""


class FileTooLarge(GitHubError):
    """A file over the 1 MB the contents API returns inline (`encoding: "none"`)."""


class UnsafeArtifact(GitHubError):
    """An artifact refused as untrusted input: too large, corrupt, or an unsafe entry."""

    def __str__(self) -> str:
        return f"{self.operation}: {self.reason}"  # GitHub answered; the content is refused


def for_status(operation: str, status: int, message: str) -> GitHubError:
    """The typed error for a non-transient status."""
    kinds: dict[int, type[GitHubError]] = {
        400: Unprocessable,
        401: Unauthorized,
        403: Forbidden,
        404: NotFound,
        410: NotFound,
        422: Unprocessable,
    }
    return kinds.get(status, GitHubError)(operation, status, message)
