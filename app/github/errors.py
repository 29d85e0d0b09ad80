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


class MergeMethodNotAllowed(GitHubError):
    """405 on merge because the repository's settings disallow the merge method
    ("Squash merges are not allowed on this repository."): asking again cannot
    help, only a person changing the setting can."""


class HeadMoved(GitHubError):
    """409 on merge: the head is no longer the SHA that was verified."""


class RepositoryMoved(GitHubError):
    """A redirect in answer to a write: the repository was renamed or transferred.

    GitHub answers its old name with 301 for reads (PyGithub follows them) and
    307 for writes, with "Moved Permanently" as the body; PyGithub hands a 307
    back as success although nothing was written. `moved_to` is the new
    OWNER/NAME when GitHub says it."""

    def __init__(
        self, operation: str, status: int, message: str, moved_to: str | None = None
    ) -> None:
        super().__init__(operation, status, message)
        self.moved_to = moved_to


class InstallationUnavailable(GitHubError):
    """GitHub makes no token for the installation: it was uninstalled (404) or is
    suspended (403 "This installation has been suspended"). Retrying cannot help
    until the account's owner installs or unsuspends the App again."""

    def __init__(self, operation: str, status: int, message: str, installation_id: int) -> None:
        super().__init__(operation, status, message)
        self.installation_id = installation_id


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
        301: RepositoryMoved,
        302: RepositoryMoved,
        303: RepositoryMoved,
        307: RepositoryMoved,
        308: RepositoryMoved,
    }
    return kinds.get(status, GitHubError)(operation, status, message)


class RetryLater(BaseException):
    """GitHub asked for a wait (a rate limit's reset, a backoff, the content
    budget) that would end past the time this thread may hold its work (an
    outbox effect's lease, `Context.waits_end_by`): nothing slept, the caller
    puts the work back for `retry_after` seconds from now. A BaseException, as
    `asyncio.CancelledError` is, so no `except Exception` on the way to the
    executor turns a postponement into a failure."""

    def __init__(self, operation: str, retry_after: float, reason: str) -> None:
        self.operation = operation
        self.retry_after = retry_after
        self.reason = reason
        super().__init__(f"GitHub {operation}: {reason}; retry in {retry_after:.0f}s")
