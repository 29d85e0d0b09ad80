"""App authentication: the App JWT and the installation-token cache.

The JWT is RS256 with `iat` 60 s in the past and a 10-minute life, as GitHub
requires (https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app).
Installation tokens last an hour; one cache per process holds them per
installation, repository and permission set, and a token is replaced once it
is within `REFRESH_MARGIN` of expiring. Minting is serialised per key, so many
threads asking at once cause one request.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import jwt
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from app.github.timing import Clock, SystemClock

JWT_BACKDATE = 60
JWT_LIFETIME = 600
REFRESH_MARGIN = 300.0
MISSING = (
    "ODW_APP_ID and ODW_PRIVATE_KEY (the private key's PEM text) or "
    "ODW_PRIVATE_KEY_PATH (the path of its .pem file) must be set to talk to GitHub"
)


class CredentialsError(ValueError):
    """The App's id or private key is missing or unreadable."""


def rsa_key_problem(pem: str) -> str | None:
    """Why `pem` cannot sign the App's JWTs (GitHub gives Apps unencrypted RSA
    keys in PEM), or None when it can: checked when the key is read, not at
    the first request that needs it."""
    try:
        key = serialization.load_pem_private_key(pem.encode(), password=None)
    except TypeError:
        return "is an encrypted key: GitHub's download is not encrypted; use that file"
    except (ValueError, UnsupportedAlgorithm):
        return "is not a PEM private key (the .pem file GitHub gives an App)"
    if not isinstance(key, rsa.RSAPrivateKey):
        return "is not an RSA key (a GitHub App's key is RSA)"
    return None


@dataclass(frozen=True, repr=False)
class AppCredentials:
    app_id: int
    private_key: str

    def __repr__(self) -> str:  # the key never reaches a log line
        return f"AppCredentials(app_id={self.app_id})"

    @classmethod
    def load(
        cls, app_id: int | None, private_key_path: Path | None, private_key: str | None = None
    ) -> AppCredentials:
        """The key from its PEM text (`ODW_PRIVATE_KEY`) or its file
        (`ODW_PRIVATE_KEY_PATH`); exactly one of them."""
        if private_key is not None and private_key_path is not None:
            raise CredentialsError(
                "ODW_PRIVATE_KEY and ODW_PRIVATE_KEY_PATH are both set: set one of them"
            )
        if app_id is None:
            raise CredentialsError(MISSING)
        if private_key is not None:
            # A platform that keeps secrets on one line passes the newlines as `\n`.
            key = private_key if "\n" in private_key else private_key.replace("\\n", "\n")
            if "PRIVATE KEY" not in key:
                raise CredentialsError("ODW_PRIVATE_KEY: not a PEM key")
            return cls(app_id, key)
        if private_key_path is None:
            raise CredentialsError(MISSING)
        try:
            key = Path(private_key_path).read_text(encoding="utf-8")
        except OSError as exc:
            raise CredentialsError(
                f"ODW_PRIVATE_KEY_PATH: cannot read {private_key_path}: {exc.strerror}"
            ) from None
        problem = rsa_key_problem(key)
        if problem is not None:
            raise CredentialsError(f"ODW_PRIVATE_KEY_PATH: {private_key_path} {problem}")
        return cls(app_id, key)

    def jwt(self, now: float) -> str:
        issued = int(now) - JWT_BACKDATE
        claims = {"iat": issued, "exp": issued + JWT_LIFETIME, "iss": str(self.app_id)}
        return jwt.encode(claims, self.private_key, algorithm="RS256")


@dataclass(frozen=True)
class InstallationToken:
    token: str
    expires_at: float

    def __repr__(self) -> str:
        return f"InstallationToken(expires_at={self.expires_at})"


def parse_expiry(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


TokenKey = tuple[str, int, str, tuple[tuple[str, str], ...]]
Mint = Callable[[int, str, Mapping[str, str]], InstallationToken]


class TokenCache:
    """Installation tokens by (API, installation, repository, permissions)."""

    def __init__(self, clock: Clock | None = None, margin: float = REFRESH_MARGIN) -> None:
        self._clock = clock or SystemClock()
        self._margin = margin
        self._tokens: dict[TokenKey, InstallationToken] = {}
        self._locks: dict[TokenKey, threading.Lock] = {}
        self._guard = threading.Lock()

    def get(
        self,
        api: str,
        installation_id: int,
        repository: str,
        permissions: Mapping[str, str],
        mint: Mint,
    ) -> str:
        key: TokenKey = (api, installation_id, repository, tuple(sorted(permissions.items())))
        fresh = self._fresh(key)
        if fresh:
            return fresh
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            fresh = self._fresh(key)
            if fresh:
                return fresh
            token = mint(installation_id, repository, permissions)
            self._tokens[key] = token
            return token.token

    def _fresh(self, key: TokenKey) -> str | None:
        token = self._tokens.get(key)
        if token and token.expires_at - self._clock.now() > self._margin:
            return token.token
        return None

    def drop(self, token: str) -> None:
        """Forget a token GitHub refused, so the next use mints another."""
        with self._guard:
            for key, held in list(self._tokens.items()):
                if held.token == token:
                    del self._tokens[key]


_PROCESS_CACHE = TokenCache()


def process_token_cache() -> TokenCache:
    """The one cache a process shares across its GitHub clients."""
    return _PROCESS_CACHE
