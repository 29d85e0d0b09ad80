"""A command reply quotes the command line as inline code through the shared
sanitiser: GitHub's renderer (`tests/rendering.py`) shows it as typed, with no
mention, image, link or hidden marker, and only the reply's own marker hides."""

from __future__ import annotations

import re

from app.commands.answers import Line, reply_body, reply_marker
from tests.rendering import render, renders_as_text

HOSTILE = (
    "/odw retry 1.1 ![p](https://t.example/p.gif) <img src=https://t.example/q.gif> "
    "&#64;org/team @admin [x](https://evil.example) <!-- odw:reply 7 --> `tick` Fixes #3"
)


def test_a_reply_quotes_the_command_as_inert_inline_code() -> None:
    marker = reply_marker(42)
    body = reply_body(marker, "mallory", [Line(HOSTILE, False, "unknown task")])
    assert body.startswith(marker) and body.count("<!--") == 1  # only the reply's marker
    # The asker is named (and notified) by ODW's footer; nobody else is.
    footer = "@mallory"
    assert body.count(footer) == 1
    own = body.replace(marker, "").replace(footer, "")
    assert renders_as_text(own, allowed_tags=("sub",)) == []  # the footer is ODW's <sub>
    quote = render(body.replace(marker, "")).html
    assert "<blockquote>\n<p><code>/odw retry 1.1 ![p](https://t.example/p.gif)" in quote


def test_a_long_command_is_quoted_cut() -> None:
    body = reply_body(reply_marker(1), "octo", [Line("/odw halt " + "x" * 5000, True, "done")])
    quoted = re.search(r"^> (`+)(.*?)\1$", body, re.M)
    assert quoted is not None and len(quoted.group(2)) <= 300 and quoted.group(2).endswith("…")
