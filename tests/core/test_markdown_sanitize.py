"""The Markdown-level sanitiser for GitHub-bound text (check runs, comments):
untrusted text can neither hide, notify, forge ODW's hidden markers, nor break
out of the block that quotes it."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.sanitize import markdown_code_block, sanitize_markdown

STATUS = "<!-- odw:status -->"

# Characters that combine into markers, comments, tags and mentions.
ALPHABET = st.sampled_from(
    [
        *list("<!->-odw:status @ab[]:`~\n "),
        "\u200b",
        "\u202e",
        "\u2066",
        "\x00",
        "\x1b",
        "\ufeff",
        "\u2028",
        "&lt;",
    ]
)
HOSTILE = st.lists(ALPHABET, max_size=60).map("".join) | st.text(max_size=80)

INVISIBLE = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff\x00-\x08\x0b-\x1f\x7f]")


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\x00b\x07c", "abc"),
        ("evil\u202eexe.md \u2066x\u2069", "evilexe.md x"),
        ("zero\u200bwidth\u200d\ufeff", "zerowidth"),
        ("keep <!-- hidden --> this", "keep  this"),
        ("title <!-- never closed", "title \uff1c!-- never closed"),
        ("ping @octocat and @org/team", "ping \uff20octocat and \uff20org/team"),
        ("mail me@example.com", "mail me@example.com"),
        (
            "<details><summary>x</summary>hidden</details>",
            "&lt;details>&lt;summary>x&lt;/summary>hidden&lt;/details>",
        ),
        ("<img src=https://t.example/p.gif>", "&lt;img src=https://t.example/p.gif>"),
        ("[odw:status]: # (hidden)\ntext", "\\[odw:status]: # (hidden)\ntext"),
        ("a < b and c > d", "a < b and c > d"),
        ("line\u2028break", "line\nbreak"),
    ],
    ids=[
        "controls",
        "bidi",
        "zero-width",
        "complete-comment-stripped",
        "lone-opener-neutralised",
        "mentions",
        "email-kept",
        "html-tags-escaped",
        "tracking-image-escaped",
        "link-definition-shown",
        "comparisons-kept",
        "line-separator",
    ],
)
def test_markdown_sanitiser_strips_and_escapes(raw: str, shown: str) -> None:
    assert sanitize_markdown(raw) == shown


@pytest.mark.parametrize(
    "forgery",
    [
        STATUS,
        "<!-- odw:status -->",
        "<!\u200b-- odw:status --\u200b>",
        "<!-<!-- x -->- odw:status -->",
        "<!-- odw:status",
        "&lt;!-- odw:status --&gt;",
        "<!--odw:status-->",
    ],
    ids=["exact", "spaced", "zero-width-split", "nested", "unclosed", "entities", "no-spaces"],
)
def test_untrusted_text_cannot_forge_a_hidden_marker(forgery: str) -> None:
    out = sanitize_markdown(f"finding: {forgery} end")
    assert "<!--" not in out and STATUS not in out
    assert "<!--" not in markdown_code_block(forgery)


def test_a_code_block_cannot_be_closed_by_the_text_it_quotes() -> None:
    tail = "ok\n```\n# Injected heading\n````\n<!-- odw:status -->\n@admin"
    block = markdown_code_block(tail, info="log")
    fence = block.split("\n", 1)[0].removesuffix("log")
    assert len(fence) == 5 and set(fence) == {"`"}
    inner = block[len(fence) + len("log") + 1 : -len(fence) - 1]
    assert fence not in inner
    assert "<!--" not in block and "@admin" not in block


@settings(max_examples=300, deadline=None)
@given(HOSTILE)
def test_sanitised_markdown_never_carries_a_marker_comment_mention_or_invisible(raw: str) -> None:
    out = sanitize_markdown(raw)
    assert "<!--" not in out
    assert not re.search(r"<[A-Za-z/!?]", out)
    assert not INVISIBLE.search(out)
    assert not re.search(r"(?<![0-9A-Za-z_.@/])@[0-9A-Za-z]", out)
    assert sanitize_markdown(out) == out
