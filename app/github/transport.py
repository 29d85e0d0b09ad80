"""One installation's PyGithub handle for one repository and permission set,
with ODW's retry layer, content budget and request counting around every call.

PyGithub is built with `retry=None` and no throttling of its own, so this is
the only place that waits. A write that may have reached GitHub (a timeout, a
dropped connection, a 5xx after sending) is re-read before it is sent again.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import requests
from github import Auth, Github, GithubException

from app.github.auth import AppCredentials, InstallationToken, TokenCache, parse_expiry
from app.github.budget import ContentBudget
from app.github.errors import (
    Forbidden,
    GitHubError,
    GitHubUnavailable,
    InstallationUnavailable,
    NotFound,
    RateLimited,
    RepositoryMoved,
    RetryLater,
    Unprocessable,
    WriteOutcomeUnknown,
    for_status,
)
from app.github.metrics import RequestCounter
from app.github.retry import RetryPolicy, Transience, classify
from app.github.timing import Clock, Sleeper
from app.metrics import RATE_LIMIT_WAIT_SECONDS, RATE_LIMIT_WAITS

log = logging.getLogger("odw.github")
T = TypeVar("T")
Kind = Literal["read", "update", "create"]
USER_AGENT = "odw-github-app"
# GitHub's 422 to a token asked for a repository name the installation does not hold.
_UNKNOWN_NAME = "not accessible to the parent installation"
TIMEOUT = 30
LIMITS = {Transience.PRIMARY_LIMIT: "primary", Transience.SECONDARY_LIMIT: "secondary"}


@dataclass
class Context:
    """What every transport of one App shares."""

    api_url: str
    credentials: AppCredentials
    tokens: TokenCache
    policy: RetryPolicy
    clock: Clock
    sleeper: Sleeper
    budget: ContentBudget
    counter: RequestCounter
    # The App's bot (`<slug>[bot]`): the author of the pull requests ODW opens.
    bot_login: str = "odw[bot]"
    timeout: int = TIMEOUT
    _current: threading.local = field(default_factory=threading.local)

    def operation(self) -> tuple[int, str]:
        return getattr(self._current, "op", (0, "unattributed"))

    def set_operation(self, installation_id: int, operation: str) -> None:
        self._current.op = (installation_id, operation)

    @contextmanager
    def waits_end_by(self, seconds: float) -> Iterator[None]:
        """This thread's waits must end within `seconds` from now: a longer one
        raises `RetryLater` instead of sleeping (an outbox effect holds a lease
        of minutes; a primary rate limit can ask for an hour)."""
        previous = getattr(self._current, "deadline", None)
        self._current.deadline = self.clock.now() + seconds
        try:
            yield
        finally:
            self._current.deadline = previous

    def sleep(self, operation: str, seconds: float, why: str) -> None:
        """Wait `seconds`, or raise `RetryLater` when that ends past `waits_end_by`."""
        deadline = getattr(self._current, "deadline", None)
        if deadline is not None and self.clock.now() + seconds > deadline:
            raise RetryLater(operation, seconds, why)
        self.sleeper.sleep(seconds)


class _HeaderAuth(Auth.Auth):
    """Supplies the Authorization header per request and counts the request."""

    def __init__(self, kind: str, supplier: Callable[[], str], ctx: Context) -> None:
        self._kind = kind
        self._supplier = supplier
        self._ctx = ctx
        self.last_token = ""

    @property
    def token_type(self) -> str:
        return self._kind

    @property
    def token(self) -> str:
        return self._supplier()

    def authentication(self, headers: dict[str, Any]) -> None:
        self._ctx.counter.add(*self._ctx.operation())
        self.last_token = self.token
        headers["Authorization"] = f"{self._kind} {self.last_token}"

    @property
    def _masked_token(self) -> str:
        return f"{self._kind} (removed)"


def _github(ctx: Context, auth: Auth.Auth) -> Github:
    return Github(
        auth=auth,
        base_url=ctx.api_url,
        timeout=ctx.timeout,
        user_agent=USER_AGENT,
        per_page=100,
        retry=None,
        seconds_between_requests=None,
        seconds_between_writes=None,
        lazy=True,
    )


def _refuse_redirected_writes(github: Github) -> None:
    """Make every 3xx answer to a write a `GithubException` of that status.

    GitHub answers a write to a renamed or transferred repository's old name with
    307 and a "Moved Permanently" body (https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#follow-redirects;
    reported in 18F/charlie#85 and mislav/hub#2449). PyGithub follows only a 301
    and returns any other 3xx as success, so a branch move or a dispatch would
    count as done while nothing changed. Every JSON request PyGithub makes, its
    own objects' included, goes through the requester's `requestJson`."""
    requester = github.requester
    send = requester.requestJson

    def request_json(verb: str, url: str, *args: Any, **kwargs: Any) -> tuple[int, Any, str]:
        status, headers, output = send(verb, url, *args, **kwargs)
        if 300 <= status < 400 and verb.upper() not in ("GET", "HEAD"):
            try:
                data = json.loads(output) if output else None
            except ValueError:
                data = None
            raise GithubException(status, data, headers)
        return status, headers, output

    requester.requestJson = request_json  # type: ignore[method-assign]


def _gone(exc: GitHubError) -> str | None:
    """Why GitHub makes no token for an installation, when that is what it said:
    404 for an installation that no longer exists, 403 "This installation has been
    suspended" ("Suspending a GitHub App installation" in GitHub's docs)."""
    if isinstance(exc, NotFound):
        return "the App's installation no longer exists on GitHub (it was uninstalled)"
    if "installation has been suspended" in exc.reason.lower():
        return "the App's installation is suspended on GitHub"
    return None


def _message(data: Any) -> str:
    if isinstance(data, dict):
        text = str(data.get("message", ""))
        errors = data.get("errors")
        return f"{text} {errors}" if errors else text
    return ""


def _next_link(headers: Mapping[str, Any]) -> str | None:
    link = {k.lower(): v for k, v in headers.items()}.get("link", "")
    for part in str(link).split(","):
        if 'rel="next"' in part:
            return part.split(";")[0].strip().strip("<>")
    return None


def _may_have_been_sent(exc: requests.RequestException) -> bool:
    if isinstance(exc, requests.ConnectTimeout):
        return False
    return "NewConnectionError" not in repr(exc) and "Connection refused" not in repr(exc)


def run(
    ctx: Context,
    installation_id: int,
    operation: str,
    fn: Callable[[], T],
    *,
    kind: Kind = "read",
    reread: Callable[[], T | None] | None = None,
    on_unauthorized: Callable[[], None] | None = None,
) -> T:
    """Call `fn` under the retry policy; typed errors for what is not transient.

    A create, or any call given `reread`, is re-read after a failure that may
    have reached GitHub, and only sent again when the re-read finds nothing."""
    attempt = 0
    while True:
        attempt += 1
        if kind == "create":
            ctx.budget.acquire(
                installation_id,
                lambda s: _limit_wait(ctx, installation_id, operation, "content", s),
            )
        ctx.set_operation(installation_id, operation)
        sent_maybe = False
        try:
            return fn()
        except GithubException as exc:
            status, headers, message = exc.status, dict(exc.headers or {}), _message(exc.data)
            sent_maybe = status >= 500
        except requests.RequestException as exc:
            status, headers, message = 0, {}, type(exc).__name__
            sent_maybe = _may_have_been_sent(exc)
        transience = classify(status, headers, message)
        if status == 401 and on_unauthorized:
            on_unauthorized()
        if transience is Transience.PERMANENT:
            raise for_status(operation, status, message) from None
        if sent_maybe and (kind == "create" or reread is not None):
            if reread is None:
                raise WriteOutcomeUnknown(operation, status, message) from None
            found = run(ctx, installation_id, f"{operation}:reread", reread)
            if found is not None:
                return found
        wait = ctx.policy.wait(transience, attempt, headers, ctx.clock.now())
        if wait is None:
            error = (
                RateLimited
                if transience in (Transience.PRIMARY_LIMIT, Transience.SECONDARY_LIMIT)
                else GitHubUnavailable
            )
            raise error(operation, status, f"{transience.value}, gave up: {message}") from None
        log.warning(
            "github %s: %s (%s); retrying in %.1fs",
            operation,
            transience.value,
            status or message,
            wait,
            extra={"installation": installation_id, "attempt": attempt},
        )
        limit = LIMITS.get(transience)
        if limit is not None:
            _count_wait(installation_id, limit, wait)
        ctx.sleep(operation, wait, f"{transience.value} ({status or message})")


def _limit_wait(ctx: Context, installation_id: int, operation: str, limit: str, s: float) -> None:
    _count_wait(installation_id, limit, s)
    ctx.sleep(operation, s, "content-creation budget")


def _count_wait(installation_id: int, limit: str, seconds: float) -> None:
    """A wait a limit asked for, counted whether it is slept or put back (`RetryLater`)."""
    RATE_LIMIT_WAITS.labels(installation=str(installation_id), limit=limit).inc()
    RATE_LIMIT_WAIT_SECONDS.labels(installation=str(installation_id), limit=limit).inc(seconds)


class Transport:
    """PyGithub for one installation, repository and permission set."""

    def __init__(
        self,
        ctx: Context,
        installation_id: int,
        repository: str,
        permissions: Mapping[str, str],
    ) -> None:
        self.ctx = ctx
        self.installation_id = installation_id
        self.repository = repository
        self.permissions = dict(permissions)
        self._auth = _HeaderAuth("token", self._token, ctx)
        self.github = _github(ctx, self._auth)
        _refuse_redirected_writes(self.github)
        self.repo = self.github.get_repo(repository)  # lazy: no request

    def _token(self) -> str:
        return self.ctx.tokens.get(
            self.ctx.api_url,
            self.installation_id,
            self.repository,
            self.permissions,
            self._mint,
        )

    def _mint(
        self, installation_id: int, repository: str, permissions: Mapping[str, str]
    ) -> InstallationToken:
        ctx = self.ctx
        app = _github(ctx, _HeaderAuth("Bearer", lambda: ctx.credentials.jwt(ctx.clock.now()), ctx))
        body = {"repositories": [repository.split("/", 1)[1]], "permissions": dict(permissions)}
        saved = ctx.operation()

        def request() -> InstallationToken:
            _, data = app.requester.requestJsonAndCheck(
                "POST", f"/app/installations/{installation_id}/access_tokens", input=body
            )
            return InstallationToken(data["token"], parse_expiry(data["expires_at"]))

        try:
            return run(ctx, installation_id, "installation_token", request)
        except (NotFound, Forbidden) as exc:
            gone = _gone(exc)
            if gone is None:
                raise
            raise InstallationUnavailable(
                exc.operation, exc.status, f"{gone} ({exc.status} {exc.reason})", installation_id
            ) from None
        except Unprocessable as exc:
            # A token is asked for by repository name, and GitHub knows only the new
            # name of a renamed or transferred repository: say where it went.
            moved_to = self._moved_to(app, installation_id) if _UNKNOWN_NAME in exc.reason else ""
            if moved_to and moved_to.lower() != repository.lower():
                raise RepositoryMoved(
                    exc.operation,
                    exc.status,
                    f"the repository moved to {moved_to} (GitHub no longer knows "
                    f"{repository} by that name); nothing was written",
                    moved_to=moved_to,
                ) from None
            raise
        finally:
            ctx.set_operation(*saved)

    def _moved_to(self, app: Github, installation_id: int) -> str:
        """The current OWNER/NAME of this repository, read through its old name (GitHub
        redirects it) with a token for all of the installation's repositories; ""
        when that cannot tell."""
        try:
            _, data = app.requester.requestJsonAndCheck(
                "POST",
                f"/app/installations/{installation_id}/access_tokens",
                input={"permissions": {"metadata": "read"}},
            )
            reader = _github(self.ctx, Auth.Token(str(data["token"])))
            _, repo = reader.requester.requestJsonAndCheck("GET", self.path(""))
            return str((repo or {}).get("full_name") or "")
        except (GithubException, requests.RequestException, KeyError, TypeError):
            return ""

    def call(
        self,
        operation: str,
        fn: Callable[[], T],
        *,
        kind: Kind = "read",
        reread: Callable[[], T | None] | None = None,
    ) -> T:
        try:
            return run(
                self.ctx,
                self.installation_id,
                operation,
                fn,
                kind=kind,
                reread=reread,
                on_unauthorized=lambda: self.ctx.tokens.drop(self._auth.last_token),
            )
        except RepositoryMoved as exc:
            raise self._named_move(exc) from None

    def _named_move(self, exc: RepositoryMoved) -> RepositoryMoved:
        """The redirect said with the repository's new name: a read of the old name
        is redirected (301, followed) to the repository itself."""
        try:
            _, data = self.github.requester.requestJsonAndCheck("GET", self.path(""))
            moved_to = str((data or {}).get("full_name") or "")
        except (GithubException, requests.RequestException):
            moved_to = ""
        if moved_to and moved_to.lower() != self.repository.lower():
            return RepositoryMoved(
                exc.operation,
                exc.status,
                f"the repository moved to {moved_to} ({self.repository} answered "
                f"{exc.status} {exc.reason}); nothing was written",
                moved_to=moved_to,
            )
        return RepositoryMoved(
            exc.operation,
            exc.status,
            f"GitHub redirected a write to {self.repository} ({exc.status} {exc.reason}): "
            "the repository was probably renamed or transferred; nothing was written",
        )

    def paginate(
        self,
        suffix: str,
        key: str | None = None,
        *,
        params: Mapping[str, Any] | None = None,
        first: tuple[Mapping[str, Any], Any] | None = None,
    ) -> list[Any]:
        """Every item of a listing, 100 a page, following GitHub's `Link: rel="next"`
        as given (GitHub names later pages by repository id, `/repositories/{id}/...`).
        `first`: the first page's headers and body when the caller already has them."""
        items: list[Any] = []
        url: str | None = self.path(suffix)
        query: dict[str, Any] | None = {"per_page": 100, **(params or {})}
        if first is not None:
            headers, data = first
            items.extend((data or {}).get(key, []) if key else (data or []))
            url, query = _next_link(headers), None
        while url:
            headers, data = self.github.requester.requestJsonAndCheck("GET", url, parameters=query)
            items.extend((data or {}).get(key, []) if key else (data or []))
            url = _next_link(headers)
            query = None
        return items

    def path(self, suffix: str) -> str:
        """A repository URL under the configured API root (PyGithub adds the prefix)."""
        return f"/repos/{self.repository}{suffix}"

    def request(
        self,
        verb: str,
        suffix: str,
        *,
        body: Any | None = None,
        params: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[dict[str, Any], Any]:
        """One REST request through PyGithub's requester (for calls PyGithub's
        objects would make in two requests, or that need conditional headers)."""
        return self.github.requester.requestJsonAndCheck(
            verb, self.path(suffix), parameters=params, headers=headers, input=body
        )
