"""Who a failure notice mentions: `notify` from `.github/odw.yml`, else the
person who started the run; never a bot or `odw app run`'s stand-in name."""

from __future__ import annotations

import pytest

from app.apphost.performers.views import mentions


@pytest.mark.parametrize(
    ("meta", "mentioned"),
    [
        ({"by": "maintainer", "notify": ["acme/ops", "octocat"]}, ("acme/ops", "octocat")),
        ({"by": "maintainer"}, ("maintainer",)),
        ({"by": "maintainer", "notify": []}, ("maintainer",)),
        ({"by": "operator"}, ()),
        ({"by": "renovate[bot]"}, ()),
        ({"by": "not a login"}, ()),
        ({}, ()),
    ],
    ids=["notify-list", "starter", "empty-list", "cli-stand-in", "bot", "not-a-login", "nobody"],
)
def test_the_notice_mentions_the_list_else_the_starter(
    meta: dict[str, object], mentioned: tuple[str, ...]
) -> None:
    assert mentions(meta) == mentioned
