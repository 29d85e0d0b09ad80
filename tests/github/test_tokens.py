"""App JWT and installation tokens: one request per token, refreshed before expiry,
narrowed to the repository and to each use's permissions."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from app import metrics
from app.github import GitHubApp
from app.github.auth import AppCredentials, CredentialsError
from app.github.checks import GitHubChecks
from app.github.client import RepositoryClient
from app.github.errors import Forbidden
from app.github.transport import Transport
from app.service_settings import load_settings
from tests.fakegithub import FakeGitHub
from tests.github.conftest import REPO
from tests.support import FakeClock


def test_the_app_jwt_is_rs256_backdated_60s_and_lives_ten_minutes(fake: FakeGitHub) -> None:
    credentials = AppCredentials(fake.app_id, fake.private_key_pem)
    token = credentials.jwt(now=1_800_000_000)
    claims = jwt.decode(
        token,
        fake._public_key,
        algorithms=["RS256"],
        options={"verify_exp": False, "verify_iat": False},
    )
    assert claims == {"iat": 1_799_999_940, "exp": 1_800_000_540, "iss": str(fake.app_id)}
    assert jwt.get_unverified_header(token)["alg"] == "RS256"


def test_credentials_come_from_the_settings_with_clear_errors(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    key = fake.write_private_key(tmp_path)
    settings = load_settings(app_id=fake.app_id, private_key_path=key, github_api_url=fake.api_url)
    assert GitHubApp.from_settings(settings).context.api_url == fake.api_url
    with pytest.raises(CredentialsError, match="ODW_APP_ID and ODW_PRIVATE_KEY"):
        GitHubApp.from_settings(load_settings(app_id=None))
    with pytest.raises(CredentialsError, match="cannot read"):
        AppCredentials.load(1, tmp_path / "missing.pem")
    (tmp_path / "bad.pem").write_text("not a key")
    with pytest.raises(CredentialsError, match="not a PEM private key"):
        AppCredentials.load(1, tmp_path / "bad.pem")
    assert "PRIVATE" not in repr(AppCredentials(1, fake.private_key_pem))


def _pem(key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey, password: bytes | None) -> str:
    crypt = (
        serialization.BestAvailableEncryption(password)
        if password
        else serialization.NoEncryption()
    )
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, crypt
    ).decode()


@pytest.mark.parametrize(
    ("text", "refusal"),
    [
        (
            "-----BEGIN RSA PRIVATE KEY-----\nbm90IGEga2V5\n-----END RSA PRIVATE KEY-----\n",
            "is not a PEM private key",
        ),
        (lambda: _pem(ec.generate_private_key(ec.SECP256R1()), None), "is not an RSA key"),
        (
            lambda: _pem(rsa.generate_private_key(public_exponent=65537, key_size=2048), b"pw"),
            "is an encrypted key",
        ),
    ],
    ids=["pem_armour_around_garbage", "an_ec_key", "an_encrypted_rsa_key"],
)
def test_a_key_that_cannot_sign_the_apps_jwt_is_refused_when_read(
    tmp_path: Path, text: str | Callable[[], str], refusal: str
) -> None:
    """Refused when read, naming the variable, not at the first GitHub call."""
    path = tmp_path / "key.pem"
    path.write_text(text if isinstance(text, str) else text())
    with pytest.raises(CredentialsError, match=f"ODW_PRIVATE_KEY_PATH: {path} {refusal}"):
        AppCredentials.load(1, path)


def test_1000_operations_on_8_threads_make_one_token_request_until_near_expiry(
    client: RepositoryClient, fake: FakeGitHub, clock: FakeClock
) -> None:
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(125):
                client.permissions.permission_of("octo")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert fake.token_requests() == 1
    assert client.context.counter.by_operation()["permissions.get"] == 1000
    clock.advance(3600 - 301)  # 5 min 1 s before expiry: still fresh
    fake.advance(3600 - 301)
    client.permissions.permission_of("octo")
    assert fake.token_requests() == 1
    clock.advance(2)  # inside the 5-minute margin: refreshed
    fake.advance(2)
    client.permissions.permission_of("octo")
    assert fake.token_requests() == 2


def test_each_use_gets_a_token_narrowed_to_the_repository_and_its_permissions(
    client: RepositoryClient, fake: FakeGitHub
) -> None:
    client.permissions.permission_of("octo")
    client.runs.list_runs("odw-stage.yml")
    asked = [r["body"] for r in fake.requests if r["path"].endswith("/access_tokens")]
    assert asked == [
        {"repositories": ["demo"], "permissions": {"metadata": "read"}},
        {"repositories": ["demo"], "permissions": {"actions": "read"}},
    ]
    held = {
        t.installation_id: t for t in fake.tokens.values() if t.permissions == {"actions": "read"}
    }
    assert [t.repositories for t in held.values()] == [[REPO]]


def test_a_token_without_the_permission_is_refused_by_github(
    client: RepositoryClient, fake: FakeGitHub
) -> None:
    reader = Transport(client.context, client.installation_id, REPO, {"metadata": "read"})
    with pytest.raises(Forbidden, match="not accessible by integration"):
        GitHubChecks(reader).check_runs_for_ref("main")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("https://api.github.com", "https://api.github.com"),
        ("https://ghe.example.com/api/v3/", "https://ghe.example.com/api/v3"),
    ],
    ids=["github.com", "ghes-trailing-slash"],
)
def test_the_api_url_is_normalised(fake: FakeGitHub, given: str, expected: str) -> None:
    app = GitHubApp(AppCredentials(fake.app_id, fake.private_key_pem), given)
    assert app.context.api_url == expected


def test_a_malformed_api_url_is_refused_with_the_setting_named(fake: FakeGitHub) -> None:
    with pytest.raises(ValueError, match="ODW_GITHUB_API_URL must be an http"):
        GitHubApp(AppCredentials(fake.app_id, fake.private_key_pem), "api.github.com")


def test_requests_are_counted_per_installation_and_operation_for_metrics(
    client: RepositoryClient, fake: FakeGitHub
) -> None:
    inst = client.installation_id
    before = metrics.REGISTRY.get_sample_value(
        "odw_github_requests_total", {"installation": str(inst)}
    )
    client.permissions.permission_of("octo")
    client.permissions.permission_of("octo")
    counts = client.context.counter.snapshot()
    assert counts[(inst, "permissions.get")] == 2
    assert counts[(inst, "installation_token")] == 1
    assert client.context.counter.total(inst) == len(fake.requests) == 3
    after = metrics.REGISTRY.get_sample_value(
        "odw_github_requests_total", {"installation": str(inst)}
    )
    assert after == (before or 0) + 3
