"""`GitHubApp`: the App's credentials and shared machinery, and the per-use
clients it hands out for one installation and repository.

Each client gets a token narrowed to its repository and to the permissions of
its use (`checks: write` for check runs, `actions: read` for artifacts, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property

from github import Github

from app.github import actions, artifacts, checks, conversation, landing_writes
from app.github import protection as branch_protection
from app.github import pulls as pull_requests
from app.github.auth import AppCredentials, TokenCache, process_token_cache
from app.github.budget import ContentBudget
from app.github.metrics import RequestCounter
from app.github.retry import RetryPolicy
from app.github.timing import Clock, Sleeper, SystemClock, SystemSleeper
from app.github.transport import Context, Transport, _github, _HeaderAuth, run
from app.service_settings import DEFAULT_API_URL, checked_api_url


class ApiUrlError(ValueError):
    """ODW_GITHUB_API_URL is not a URL ODW may send credentials to."""


def normalise_api_url(url: str) -> str:
    """The settings' rule (`checked_api_url`), for an App built without Settings."""
    try:
        return checked_api_url(url)
    except ValueError as exc:
        raise ApiUrlError(f"ODW_GITHUB_API_URL {exc}") from None


class GitHubApp:
    def __init__(
        self,
        credentials: AppCredentials,
        api_url: str = DEFAULT_API_URL,
        *,
        tokens: TokenCache | None = None,
        policy: RetryPolicy | None = None,
        clock: Clock | None = None,
        sleeper: Sleeper | None = None,
        counter: RequestCounter | None = None,
        bot_login: str = "odw[bot]",
    ) -> None:
        clock = clock or SystemClock()
        sleeper = sleeper or SystemSleeper()
        self.context = Context(
            api_url=normalise_api_url(api_url),
            credentials=credentials,
            tokens=tokens or process_token_cache(),
            policy=policy or RetryPolicy(),
            clock=clock,
            sleeper=sleeper,
            budget=ContentBudget(clock, sleeper),
            counter=counter or RequestCounter(),
            bot_login=bot_login,
        )
        self.html_url = ""  # the App's page on GitHub, once `identify` has read it

    @classmethod
    def from_settings(cls, settings: object, **kw: object) -> GitHubApp:
        """From the service's Settings (`app_id`, `private_key` or
        `private_key_path`, `github_api_url`). The bot login stays the default
        until `identify` reads the App's slug from GitHub."""
        key = getattr(settings, "private_key", None)
        credentials = AppCredentials.load(
            getattr(settings, "app_id", None),
            getattr(settings, "private_key_path", None),
            key.get_secret_value() if key is not None else None,
        )
        api_url = getattr(settings, "github_api_url", DEFAULT_API_URL)
        return cls(credentials, api_url, **kw)  # type: ignore[arg-type]

    @property
    def app_id(self) -> int:
        return self.context.credentials.app_id

    @property
    def bot_login(self) -> str:
        return self.context.bot_login

    @property
    def counter(self) -> RequestCounter:
        return self.context.counter

    def _as_app(self) -> Github:
        """A PyGithub handle authenticated as the App itself (its JWT)."""
        ctx = self.context
        jwt = _HeaderAuth("Bearer", lambda: ctx.credentials.jwt(ctx.clock.now()), ctx)
        return _github(ctx, jwt)

    def identify(self, *, attempts: int | None = None) -> str:
        """Read the App's slug from GitHub (`GET /app`, with the App's JWT) and
        take `<slug>[bot]` as the bot login from now on (and its page on GitHub
        as `html_url`); returns the slug.

        The slug is GitHub's answer, never a setting, so the comments and pull
        requests ODW trusts as its own are those of the App that holds the key
        (https://docs.github.com/rest/apps/apps#get-the-authenticated-app).
        `attempts` bounds the tries (the policy's otherwise): a caller that asks
        again on its own schedule does not wait through the policy's backoff."""
        data = self.authenticated_app(attempts=attempts)
        slug, self.html_url = str(data["slug"]), str(data.get("html_url") or "")
        self.context.bot_login = f"{slug}[bot]"
        return slug

    def installation_of(self, full_name: str) -> int:
        """The id of the App's installation on `full_name` (asked with the App's
        JWT); NotFound when the App is not installed there."""
        ctx = self.context
        app = self._as_app()

        def read() -> int:
            _, data = app.requester.requestJsonAndCheck("GET", f"/repos/{full_name}/installation")
            return int(data["id"])

        return run(ctx, 0, "apps.installation", read)

    def authenticated_app(self, *, attempts: int | None = None) -> dict[str, object]:
        """The App as GitHub knows it (`GET /app` with the App's JWT); raises
        `Unauthorized` when GitHub refuses the JWT: an App id and a key that do
        not belong together."""
        app = self._as_app()
        ctx = self.context
        if attempts is not None:
            ctx = replace(ctx, policy=replace(ctx.policy, max_attempts=attempts))

        def read() -> dict[str, object]:
            _, data = app.requester.requestJsonAndCheck("GET", "/app")
            return dict(data)

        return run(ctx, 0, "apps.get-authenticated", read)

    def repository(self, installation_id: int, full_name: str) -> RepositoryClient:
        if full_name.count("/") != 1 or not all(full_name.split("/")):
            raise ValueError(f"a repository is OWNER/NAME, got {full_name!r}")
        return RepositoryClient(self.context, installation_id, full_name)


@dataclass
class RepositoryClient:
    """The ports for one repository, each on its own narrowly scoped token."""

    context: Context
    installation_id: int
    full_name: str

    def _transport(self, permissions: Mapping[str, str]) -> Transport:
        return Transport(self.context, self.installation_id, self.full_name, permissions)

    @cached_property
    def checks(self) -> checks.GitHubChecks:
        return checks.GitHubChecks(self._transport(checks.PERMISSIONS))

    @cached_property
    def comments(self) -> conversation.GitHubComments:
        return conversation.GitHubComments(self._transport(conversation.COMMENT_PERMISSIONS))

    @cached_property
    def reactions(self) -> conversation.GitHubReactions:
        return conversation.GitHubReactions(self._transport(conversation.REACTION_PERMISSIONS))

    @cached_property
    def permissions(self) -> conversation.GitHubPermissions:
        return conversation.GitHubPermissions(self._transport(conversation.PERMISSION_PERMISSIONS))

    @cached_property
    def pulls(self) -> pull_requests.GitHubPulls:
        return pull_requests.GitHubPulls(
            self._transport(pull_requests.PULL_PERMISSIONS),
            self._transport(pull_requests.MERGE_PERMISSIONS),
        )

    @cached_property
    def contents(self) -> pull_requests.GitHubContents:
        return pull_requests.GitHubContents(self._transport(pull_requests.READ_PERMISSIONS))

    @cached_property
    def refs(self) -> pull_requests.GitHubContents:
        return pull_requests.GitHubContents(self._transport(pull_requests.REF_PERMISSIONS))

    @cached_property
    def protection(self) -> branch_protection.GitHubProtection:
        return branch_protection.GitHubProtection(
            self._transport(branch_protection.PROTECTION_PERMISSIONS)
        )

    @cached_property
    def check_states(self) -> branch_protection.GitHubCheckStates:
        return branch_protection.GitHubCheckStates(
            self._transport(branch_protection.CHECK_PERMISSIONS),
            self._transport(branch_protection.STATUS_PERMISSIONS),
        )

    @cached_property
    def runs(self) -> actions.GitHubRuns:
        return actions.GitHubRuns(self._transport(actions.RUN_PERMISSIONS))

    @cached_property
    def dispatch(self) -> actions.GitHubDispatch:
        return actions.GitHubDispatch(self._transport(actions.DISPATCH_PERMISSIONS))

    @cached_property
    def artifacts(self) -> artifacts.GitHubArtifacts:
        return artifacts.GitHubArtifacts(self._transport(artifacts.PERMISSIONS))

    def land_views(self, writes: landing_writes.LandingWrites) -> int:
        """A landing's writes in one request (`landing_writes.send`)."""
        return landing_writes.send(self._transport(landing_writes.PERMISSIONS), writes)

    def authorise(self, permissions: Mapping[str, str]) -> None:
        """Mint (or reuse) this repository's token for `permissions`; raises the
        GitHub error (422) when the installation was not granted them."""
        self._transport(permissions)._token()

    def git_token(self, *, write: bool = False) -> str:
        """A token for git over HTTPS (pass it through GIT_ASKPASS, never in a URL)."""
        transport = self._transport({"contents": "write" if write else "read"})
        return transport._token()
