"""`.github/odw.yml`'s `notify`: who a failure notice mentions, checked when read."""

from __future__ import annotations

import pytest

from app.core.repo_config import ConfigProblem, read_repo_config


def test_notify_takes_logins_and_teams_with_or_without_the_at() -> None:
    config = read_repo_config("notify: ['@octocat', 'acme/ops', octocat]\n")
    assert config.notify == ("octocat", "acme/ops")
    assert read_repo_config("gates: []\n").notify == ()


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("notify: ['not a login']\n", "is not a GitHub login"),
        ("notify: ['-dash']\n", "is not a GitHub login"),
        ("notify: [" + ", ".join(f"u{i}" for i in range(11)) + "]\n", "at most 10"),
        ("notify: octocat\n", "tuple"),
    ],
    ids=["space", "leading-dash", "too-many", "not-a-list"],
)
def test_a_bad_notify_list_names_the_field_and_line(text: str, says: str) -> None:
    with pytest.raises(ConfigProblem) as caught:
        read_repo_config("gates: []\n" + text)
    assert caught.value.field.startswith("notify") and caught.value.line == 2
    assert says in caught.value.message
