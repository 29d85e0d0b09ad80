"""Who the App is comes from GitHub and where operators keep it (issue 29, item 2).

The slug is GitHub's answer to `GET /app`, so `<slug>[bot]` is the only author
whose marked comments the App trusts; the private key is read from its PEM
text (`ODW_PRIVATE_KEY`) as well as from a file (`ODW_PRIVATE_KEY_PATH`), and
the settings from a file named by `ODW_ENV_FILE`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.apphost.host import AppHost
from app.github import GitHubApp
from app.github.auth import CredentialsError
from app.service_settings import SettingsError, load_settings
from app.store import Store
from tests.fakegithub import FakeGitHub
from tests.fakegithub.oracles import REST_OPENAPI, require_oracle

REPO = "acme/demo"
MARKER = "<!-- odw:status 1.1 -->"


@pytest.fixture
def acme(tmp_path: Path) -> Iterator[FakeGitHub]:
    """A fake GitHub whose App is registered as `odw-acme` (its bot `odw-acme[bot]`)."""
    require_oracle(REST_OPENAPI)
    server = FakeGitHub(tmp_path / "github", app_slug="odw-acme").start()
    try:
        yield server
    finally:
        server.stop()
    server.assert_no_violations()


@pytest.fixture(autouse=True)
def no_odw_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in [n for n in os.environ if n.startswith("ODW_")]:
        monkeypatch.delenv(name)


def test_the_bot_is_the_slug_github_answers_and_only_its_marked_comments_are_trusted(
    acme: FakeGitHub, tmp_path: Path
) -> None:
    settings = load_settings(
        app_id=acme.app_id,
        private_key_path=acme.write_private_key(tmp_path),
        github_api_url=acme.api_url,
        data_dir=tmp_path / "data",
    )
    store = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}")
    try:
        host = AppHost.from_settings(settings, store)
    finally:
        store.close()
    assert host is not None
    github = host.executor.context.github
    assert github.bot_login == "odw-acme[bot]"
    assert host.executor.context.config.bot_login == "odw-acme[bot]"
    assert any(r["path"] == "/app" for r in acme.requests)

    acme.create_repository(REPO, {"README.md": "# demo\n"})
    installation = acme.install("acme", [REPO])
    number = acme.open_issue(REPO)
    comments = github.repository(installation.id, REPO).comments
    own = comments.create_comment(number, f"{MARKER}\nmine")
    # Newer, with the marker, by the bot a default slug would name: not trusted.
    acme.add_comment(REPO, number, f"{MARKER}\nforged", "odw[bot]", "Bot")
    found = comments.find_marked_comment(number, MARKER, github.bot_login)
    assert found is not None and found.id == own.id


@pytest.mark.parametrize(
    "form", ["pem_text", "one_line_text", "file"], ids=["pem-text", "one-line-text", "file"]
)
def test_the_private_key_is_read_from_its_text_or_its_file_and_github_accepts_the_jwt(
    acme: FakeGitHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    monkeypatch.setenv("ODW_APP_ID", str(acme.app_id))
    monkeypatch.setenv("ODW_GITHUB_API_URL", acme.api_url)
    if form == "file":
        monkeypatch.setenv("ODW_PRIVATE_KEY_PATH", str(acme.write_private_key(tmp_path)))
    elif form == "pem_text":
        monkeypatch.setenv("ODW_PRIVATE_KEY", acme.private_key_pem)
    else:  # as a platform that keeps a secret on one line passes it
        monkeypatch.setenv("ODW_PRIVATE_KEY", acme.private_key_pem.replace("\n", "\\n"))
    assert GitHubApp.from_settings(load_settings()).identify() == "odw-acme"


def test_a_key_given_twice_or_not_a_key_is_refused_naming_the_variable(
    acme: FakeGitHub, tmp_path: Path
) -> None:
    path = acme.write_private_key(tmp_path)
    both = load_settings(app_id=1, private_key_path=path, private_key=acme.private_key_pem)
    with pytest.raises(CredentialsError, match="ODW_PRIVATE_KEY and ODW_PRIVATE_KEY_PATH"):
        GitHubApp.from_settings(both)
    with pytest.raises(CredentialsError, match="ODW_PRIVATE_KEY: not a PEM key"):
        GitHubApp.from_settings(load_settings(app_id=1, private_key="hunter2"))
    with pytest.raises(CredentialsError, match="ODW_APP_ID and ODW_PRIVATE_KEY"):
        GitHubApp.from_settings(load_settings(app_id=1))


def test_settings_come_from_the_env_file_and_the_environment_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_file = tmp_path / "odw.env"
    env_file.write_text(
        'ODW_APP_ID=77\nODW_WEBHOOK_SECRET="from-file"\n'
        'ODW_PRIVATE_KEY="-----BEGIN RSA PRIVATE KEY-----\\nAAAA\\n'
        '-----END RSA PRIVATE KEY-----\\n"\n'
    )
    monkeypatch.setenv("ODW_ENV_FILE", str(env_file))
    settings = load_settings()
    assert settings.app_id == 77
    assert settings.webhook_secrets() == ["from-file"]
    assert settings.private_key is not None
    assert settings.private_key.get_secret_value().splitlines()[1] == "AAAA"
    monkeypatch.setenv("ODW_WEBHOOK_SECRET", "from-environment")
    assert load_settings().webhook_secrets() == ["from-environment"]
    monkeypatch.setenv("ODW_ENV_FILE", str(tmp_path / "missing.env"))
    with pytest.raises(SettingsError, match=r"^ODW_ENV_FILE: cannot read .*missing\.env"):
        load_settings()
