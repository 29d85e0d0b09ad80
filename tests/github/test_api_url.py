"""`ODW_GITHUB_API_URL` receives the App's JWTs and installation tokens: plain
http:// only to a loopback host (a fake GitHub on this machine), and a host
every URL parser on the way reads alike."""

from __future__ import annotations

import pytest

from app.github.auth import AppCredentials
from app.github.client import ApiUrlError, GitHubApp
from app.service_settings import SettingsError, load_settings

ACCEPTED = [
    ("https://api.github.com", "https://api.github.com"),
    ("https://ghe.example.com/api/v3/", "https://ghe.example.com/api/v3"),
    ("http://127.0.0.1:8080/api/v3", "http://127.0.0.1:8080/api/v3"),
    ("http://127.8.9.10/api/v3", "http://127.8.9.10/api/v3"),
    ("http://[::1]:8080/api/v3", "http://[::1]:8080/api/v3"),
    ("http://localhost:8080/api/v3", "http://localhost:8080/api/v3"),
]
IN_CLEAR = [
    "http://ghe.example.com/api/v3",
    "http://10.0.0.1/api/v3",
    "http://localhost.example.com/api/v3",
    "http://127.0.0.1.example.com/api/v3",
    "http://127.1/api/v3",  # loopback to some parsers, a name to others: refused
]
# Each reads as a loopback host to one parser and as ghe.example.com to another.
AMBIGUOUS = [
    "http://ghe.example.com\\@127.0.0.1/api/v3",
    "http://127.0.0.1\\@ghe.example.com/api/v3",
    "http://user@127.0.0.1/api/v3",
    "http://ghe.example.com?@127.0.0.1/",
    "http://ghe.example.com#@127.0.0.1/",
    "ftp://ghe.example.com/api/v3",
    "https://",
]


@pytest.mark.parametrize(("given", "used"), ACCEPTED, ids=[g for g, _ in ACCEPTED])
def test_https_and_loopback_http_are_accepted(given: str, used: str) -> None:
    assert load_settings(github_api_url=given).github_api_url == used


@pytest.mark.parametrize("url", IN_CLEAR, ids=IN_CLEAR)
def test_plain_http_to_another_host_is_a_settings_error_naming_the_variable(url: str) -> None:
    with pytest.raises(SettingsError) as caught:
        load_settings(github_api_url=url)
    message = str(caught.value)
    assert "ODW_GITHUB_API_URL: must use https://" in message
    assert "loopback" in message and "\n" not in message


@pytest.mark.parametrize("url", AMBIGUOUS, ids=AMBIGUOUS)
def test_a_url_whose_host_parsers_could_read_differently_is_refused(url: str) -> None:
    with pytest.raises(SettingsError, match="ODW_GITHUB_API_URL: must be an https URL"):
        load_settings(github_api_url=url)


def test_an_app_built_without_settings_obeys_the_same_rule() -> None:
    credentials = AppCredentials(1, "not a key: nothing is signed or sent")
    with pytest.raises(ApiUrlError, match="ODW_GITHUB_API_URL must use https://"):
        GitHubApp(credentials, "http://ghe.example.com/api/v3")
    assert GitHubApp(credentials, "http://127.0.0.1:1/api/v3").context.api_url == (
        "http://127.0.0.1:1/api/v3"
    )
