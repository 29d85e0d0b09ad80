"""The service's configuration: one pydantic-settings object, read once from
`ODW_*` environment variables and, when `ODW_ENV_FILE` names one, a file of
such settings (what `odw app register` writes); the environment wins."""

from __future__ import annotations

import ipaddress
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic_core import PydanticCustomError
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_API_URL = "https://api.github.com"
# One delivery at the body limit (webhooks.delivery.MAX_BODY_BYTES, 25 MB) with
# its headers must fit the HTTP process's in-flight budget.
MIN_INFLIGHT_MB = 26
# A host name or bracketed IPv6 address, and a port: no user part.
_PLAIN_HOST = re.compile(r"(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")
# Visible ASCII without the characters parsers disagree on (`\`) or that end
# the path (`?`, `#`).
_PLAIN_URL = re.compile(r"(?:(?![\\?#])[!-~])+")


class SettingsError(Exception):
    """Configuration is missing or invalid; the message is one line, and
    `problems` holds one line per variable."""

    def __init__(self, message: str, problems: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.problems = problems or (message,)


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback  # 127.0.0.0/8, ::1
    except ValueError:
        return False


def checked_api_url(url: str) -> str:
    """`url` without its trailing slash, when ODW may send the App's JWTs and
    installation tokens there: https, or plain http to a loopback host only (a
    fake GitHub in tests); ValueError saying why otherwise. The host is plain
    (no user part, backslash, query or fragment), so every URL parser on the
    way reads the same host as this check."""
    given = url.strip()
    url = given.rstrip("/")
    parts = urlsplit(url)
    if (
        parts.scheme not in ("https", "http")
        or not _PLAIN_HOST.fullmatch(parts.netloc)
        or not _PLAIN_URL.fullmatch(url)
    ):
        raise ValueError(
            f"must be an https URL such as {DEFAULT_API_URL} or https://HOST/api/v3 "
            f"(a host and port, a path, nothing else), got {given!r}"
        )
    host = parts.hostname or ""
    if parts.scheme == "http" and not _loopback(host):
        raise ValueError(
            f"must use https://: plain http:// would send the App's tokens in clear to "
            f"{host} (http:// is accepted only for a loopback host: "
            "127.0.0.0/8, ::1 or localhost)"
        )
    return url


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ODW_", extra="ignore", frozen=True)

    webhook_secret: SecretStr | None = None
    webhook_secret_previous: SecretStr | None = None
    app_id: int | None = None
    private_key_path: Path | None = None
    # The key's PEM text itself, as container platforms pass secrets.
    private_key: SecretStr | None = None
    # GitHub Enterprise Server: https://HOST/api/v3. Every REST URL is rooted here.
    github_api_url: str = DEFAULT_API_URL
    database_url: str | None = None
    data_dir: Path = Path("var")
    workers: int = Field(default=2, ge=0, le=64)
    # Unset: chosen from the core count and the database (app.web.server.http_shape).
    http_processes: int | None = Field(default=None, ge=1, le=64)
    http_threads: int | None = Field(default=None, ge=1, le=256)
    # Seconds a client has to send a whole request (headers and body), and its headers.
    http_read_timeout: float = Field(default=30.0, gt=0, le=3600)
    http_header_timeout: float = Field(default=5.0, gt=0, le=3600)
    # Megabytes (10^6 bytes) the requests in flight may hold per HTTP process.
    http_inflight_mb: int = Field(default=64, le=1_000_000)
    delivery_lease_seconds: float = Field(default=60.0, gt=0)
    delivery_max_attempts: int = Field(default=5, ge=1)
    retry_base_seconds: float = Field(default=2.0, ge=0)
    retry_max_seconds: float = Field(default=300.0, ge=0)
    poll_seconds: float = Field(default=0.2, gt=0)
    log_level: str = "INFO"
    # Bearer token for /metrics and /api/*; unset, those endpoints do not exist.
    admin_token: SecretStr | None = None
    # Inbox rows and delivery bodies older than this are pruned.
    retention_days: float = Field(default=14.0, gt=0)
    # The App host (app/apphost): outbox executor threads per process, how often the
    # reconciler polls what webhooks may have missed, and a public URL check runs
    # link to as their details. The App's slug (its bot is `<slug>[bot]`) is not
    # a setting: the service reads it from GitHub (`GET /app`) when it starts.
    executors: int = Field(default=2, ge=1, le=64)
    reconcile_seconds: float = Field(default=300.0, gt=0)
    # How long an executor holds an effect before another may take it over (a crash).
    effect_lease_seconds: float = Field(default=120.0, gt=0)
    public_url: str | None = None

    @field_validator(
        "webhook_secret", "webhook_secret_previous", "admin_token", "private_key", mode="before"
    )
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("github_api_url")
    @classmethod
    def _api_url(cls, value: str) -> str:
        try:
            return checked_api_url(value)
        except ValueError as exc:
            raise PydanticCustomError("api_url", str(exc)) from None

    @field_validator("http_inflight_mb")
    @classmethod
    def _inflight_mb(cls, value: int) -> int:
        if value < MIN_INFLIGHT_MB:
            raise PydanticCustomError(
                "inflight_mb",
                "must be at least {least}, room for one 25 MB delivery and its headers, got {got}",
                {"least": MIN_INFLIGHT_MB, "got": value},
            )
        return value

    @property
    def inflight_bytes(self) -> int:
        return self.http_inflight_mb * 1_000_000

    @property
    def database(self) -> str:
        """The database URL; SQLite under the data directory by default."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.data_dir / 'odw.sqlite3'}"

    def webhook_secrets(self) -> list[str]:
        """The secrets a signature may match: current, then previous (rotation)."""
        return [
            s.get_secret_value()
            for s in (self.webhook_secret, self.webhook_secret_previous)
            if s is not None
        ]

    def admin_token_value(self) -> str | None:
        return self.admin_token.get_secret_value() if self.admin_token else None

    def require_webhook_secret(self) -> None:
        if self.webhook_secret is None:
            raise SettingsError(
                "ODW_WEBHOOK_SECRET is not set: set it to the webhook secret of your "
                "GitHub App (`make run` creates a local one under var/)"
            )


ENV_FILE_VARIABLE = "ODW_ENV_FILE"


def load_settings(**overrides: object) -> Settings:
    """Read the environment (and `ODW_ENV_FILE`); invalid values raise
    SettingsError with one line."""
    env_file = os.environ.get(ENV_FILE_VARIABLE, "").strip() or None
    if env_file is not None:
        try:
            Path(env_file).read_bytes()
        except OSError as exc:
            raise SettingsError(
                f"{ENV_FILE_VARIABLE}: cannot read {env_file}: {exc.strerror or exc}"
            ) from None
    try:
        return Settings(_env_file=env_file, **overrides)  # type: ignore[arg-type, call-arg]
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = str(err["loc"][0]) if err["loc"] else "?"
            problems.append(f"ODW_{field.upper()}: {err['msg']}")
        raise SettingsError("invalid settings: " + "; ".join(problems), tuple(problems)) from None
