"""What `odw serve` checks before it listens, so broken settings stop it at
once with one line per problem naming the variable, instead of a worker that
crash-loops while `/healthz` says ok and deliveries are acknowledged and never
acted on.

GitHub's answer to the App's JWT is asked once: a refusal is a problem, no
answer only a warning (GitHub may be down while the service must still store
deliveries).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from app.service_settings import Settings, SettingsError, load_settings

log = logging.getLogger("odw.serve")

# Seconds GitHub has to answer `GET /app` at start before it is called unreachable.
GITHUB_SECONDS = 10

# What `/healthz` says of GitHub, as found at start.
GITHUB_OK = "ok"
GITHUB_UNREACHABLE = "unreachable"
GITHUB_UNSET = "not configured"


@dataclass
class Findings:
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    github: str = GITHUB_UNSET


def check_settings() -> tuple[Settings | None, Findings]:
    """The settings and what is wrong with them on this host (the secret, the
    data directory, `git`), without importing the store or the metrics (whose
    directory `odw serve` sets up first); settings are None when they cannot
    even be read (each invalid variable is then a problem)."""
    found = Findings()
    try:
        settings = load_settings()
    except SettingsError as exc:
        found.problems.extend(exc.problems)
        return None, found
    try:
        settings.require_webhook_secret()
    except SettingsError as exc:
        found.problems.append(str(exc))
    found.problems.extend(_data_dir(settings.data_dir))
    found.problems.extend(_credentials_given(settings))
    if shutil.which("git") is None:
        found.problems.append(
            "PATH: no `git` found; the App's landings run git: install it or add it to PATH"
        )
    return settings, found


def check_services(settings: Settings, found: Findings) -> None:
    """What the settings point at: the database, and the App's credentials
    as GitHub judges them."""
    found.problems.extend(_database(settings))
    _github(settings, found)


def _data_dir(path: Path) -> list[str]:
    """The data directory holds SQLite and git mirrors: it must take a file."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".odw-write-check-"):
            pass
    except OSError as exc:
        return [f"ODW_DATA_DIR: cannot write to {path}: {exc.strerror or exc}"]
    return []


def _database(settings: Settings) -> list[str]:
    from sqlalchemy import text
    from sqlalchemy.exc import SQLAlchemyError

    from app.store import Store

    name = "ODW_DATABASE_URL" if settings.database_url else "ODW_DATA_DIR"
    try:
        store = Store(settings.database)
    except (SQLAlchemyError, ValueError) as exc:
        return [f"{name}: not a database URL odw can open: {_first_line(exc)}"]
    try:
        with store.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
    except SQLAlchemyError as exc:
        return [f"{name}: cannot reach the database {store.describe()}: {_first_line(exc)}"]
    finally:
        store.close()
    return []


def _first_line(exc: BaseException) -> str:
    cause = getattr(exc, "orig", None) or exc
    text = str(cause).strip().splitlines()
    return text[0] if text else type(cause).__name__


def _credentials_given(settings: Settings) -> list[str]:
    """The App's id and key (as text or as a path): both or neither, and an id
    GitHub could give."""
    app_id = settings.app_id
    key = "ODW_PRIVATE_KEY" if settings.private_key is not None else (
        "ODW_PRIVATE_KEY_PATH" if settings.private_key_path is not None else None
    )  # fmt: skip
    if app_id is None and key is None:
        return []  # deliveries are stored, not acted on (the worker says so at start)
    if app_id is None:
        return [f"ODW_APP_ID: not set while {key} is; the App needs both (its id and its key)"]
    if key is None:
        return [
            "ODW_PRIVATE_KEY_PATH: not set while ODW_APP_ID is; the App needs both (its id "
            "and its private key: the .pem file GitHub gave, by path or as ODW_PRIVATE_KEY)"
        ]
    if app_id <= 0:
        return [f"ODW_APP_ID: must be the App's id, a positive number, got {app_id}"]
    return []


def _github(settings: Settings, found: Findings) -> None:
    """A key that signs, and a JWT GitHub accepts (the id and key path are
    both set: `_credentials_given`)."""
    from app.github import GitHubApp
    from app.github.auth import AppCredentials, CredentialsError
    from app.github.errors import GitHubError, Unauthorized
    from app.github.retry import RetryPolicy

    app_id, key_path, text = settings.app_id, settings.private_key_path, settings.private_key
    if app_id is None or (key_path is None and text is None):
        return
    try:
        credentials = AppCredentials.load(
            app_id, key_path, text.get_secret_value() if text is not None else None
        )
    except CredentialsError as exc:
        found.problems.append(str(exc))
        return
    github = GitHubApp(credentials, settings.github_api_url, policy=RetryPolicy(max_attempts=1))
    github.context.timeout = GITHUB_SECONDS
    try:
        github.authenticated_app()
    except Unauthorized as exc:
        found.problems.append(
            f"ODW_APP_ID / ODW_PRIVATE_KEY(_PATH): GitHub refused the App's token "
            f"({exc.reason}): the key {'at ' + str(key_path) if key_path else 'given'} "
            f"is not App {app_id}'s"
        )
        return
    except GitHubError as exc:
        found.warnings.append(
            f"ODW_GITHUB_API_URL: GitHub did not accept or answer GET /app at "
            f"{settings.github_api_url} ({exc.status or 'no answer'} {exc.reason}); starting anyway"
        )
        found.github = GITHUB_UNREACHABLE
        return
    found.github = GITHUB_OK
