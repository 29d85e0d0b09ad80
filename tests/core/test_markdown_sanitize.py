"""The Markdown-level sanitiser for GitHub-bound text (check runs, comments,
pull request bodies and titles): untrusted text renders as text. It can
neither hide, load an image, make a link, notify, reference or close an issue,
forge ODW's hidden markers, nor break out of the block that quotes it; GitHub's
own renderer (cmark-gfm, `tests/rendering.py`) is the judge."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.sanitize import inline_code, markdown_code_block, sanitize_line, sanitize_markdown
from tests.rendering import ISSUE_REFERENCE, MENTION, render, renders_as_text

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
        "&#64;",
        "&#x40;",
        "&commat;",
        "&#35;1",
        "#1",
        "GH-1",
        "Fixes ",
        "![",
        "](",
        "https://x.example/p.gif",
        "www.x.example",
        "mailto:",
        "\\",
        "<img src=x>",
        "<a href=y>",
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
        ("mail me@example.com", "mail me\uff20example.com"),
        (
            "<details><summary>x</summary>hidden</details>",
            "\\<details>\\<summary>x\\</summary>hidden\\</details>",
        ),
        ("<img src=x.gif>", "\\<img src=x.gif>"),
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
        "email-unlinked",
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
        "&lt;!-- odw:status -->",
        "<!-- odw:status -->",
        "<!\u200b-- odw:status --\u200b>",
        "<!-<!-- x -->- odw:status -->",
        "<!-- odw:status",
        "&lt;!-- odw:status --&gt;",
        "<!--odw:status-->",
    ],
    ids=[
        "exact",
        "entity-opener",
        "spaced",
        "zero-width-split",
        "nested",
        "unclosed",
        "entities",
        "no-spaces",
    ],
)
def test_untrusted_text_cannot_forge_a_hidden_marker(forgery: str) -> None:
    out = sanitize_markdown(f"finding: {forgery} end")
    assert "<!--" not in out and STATUS not in out
    assert render(out).comments == []
    assert "<!--" not in markdown_code_block(forgery)
    assert "<!--" not in inline_code(forgery)


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
    assert not INVISIBLE.search(out)
    assert renders_as_text(out) == []
    assert sanitize_markdown(out) == out


# Each renders, unsanitised, as an image, a link, a mention, an issue reference
# or hidden HTML on GitHub (checked below, so a sample cannot go stale).
HOSTILE_SAMPLES = {
    "markdown-image": "look ![pixel](https://t.example/p.gif) here",
    "html-image": '<img src="https://t.example/p.gif">',
    "picture": '<picture><source srcset="https://t.example/p.gif"></picture>',
    "inline-link": "[docs](https://evil.example)",
    "reference-link": "[docs][1]\n\n[1]: https://evil.example",
    "autolink": "<https://evil.example>",
    "bare-url": "see https://evil.example/x now",
    "www": "see www.evil.example now",
    "email": "write to admin@evil.example",
    "mailto": "mailto:admin@evil.example",
    "mention": "thanks @octocat",
    "team-mention": "cc @org/team",
    "decimal-entity-mention": "cc &#64;org/team",
    "hex-entity-mention": "cc &#x40;octocat",
    "named-entity-mention": "cc &commat;octocat",
    "issue-reference": "see #12",
    "entity-issue-reference": "see &#35;12",
    "cross-repository-reference": "see org/repo#12",
    "gh-reference": "see GH-12",
    "closing-keyword": "Fixes #12",
    "closing-keyword-url": "Closes https://github.com/o/r/issues/1",
    "details": "<details><summary>ok</summary>hidden</details>",
    "comment-marker": "<!-- odw:status v1 task=1.1 -->",
    "footnote": "text[^1]\n\n[^1]: https://evil.example",
    "escaped-backslash-link": "\\\\[docs](https://evil.example)",
}


@pytest.mark.parametrize("raw", HOSTILE_SAMPLES.values(), ids=HOSTILE_SAMPLES.keys())
def test_untrusted_markdown_renders_as_text_on_github(raw: str) -> None:
    assert renders_as_text(raw) != []  # what it would do unsanitised
    out = sanitize_markdown(raw)
    assert renders_as_text(out) == [], render(out).html
    # Shown, not dropped: the words are still there for a reader.
    words = re.findall(r"[a-z]{4,}", re.sub(r"<!--.*?-->|mailto", "", raw))
    shown = render(out).text
    assert all(w in shown for w in words if w not in ("href", "summary", "srcset", "source")), shown


def test_formatting_survives_the_sanitiser() -> None:
    html = render(sanitize_markdown("**Bold** and `make test`, then *done*")).html
    assert "<strong>Bold</strong>" in html and "<code>make test</code>" in html
    assert "<em>done</em>" in html


def test_a_fence_in_untrusted_prose_picks_no_renderer() -> None:
    out = sanitize_markdown("```mermaid\ngraph TD; A-->B\n```")
    assert "mermaid" not in render(out).html


@pytest.mark.parametrize("raw", HOSTILE_SAMPLES.values(), ids=HOSTILE_SAMPLES.keys())
def test_a_title_line_mentions_and_references_nothing(raw: str) -> None:
    title = sanitize_line(raw)
    assert "\n" not in title
    assert not MENTION.search(title) and not ISSUE_REFERENCE.search(title)
    assert "<!--" not in title


@settings(max_examples=300, deadline=None)
@given(HOSTILE)
def test_inline_code_is_one_code_span_showing_the_sanitised_text(raw: str) -> None:
    quoted = inline_code(raw, limit=1000)
    html = render(quoted).html
    r = render(quoted)
    assert r.tags == ["p", "code"], html
    assert renders_as_text(quoted) == [], html
    assert "\n" not in quoted and "<!--" not in quoted
    assert r.text.strip() == " ".join(r.text.split())


def test_inline_code_quotes_a_hostile_command_line_verbatim_but_inert() -> None:
    line = "/odw retry 1.2 ``` <img src=x> @admin <!-- odw:reply 9 --> `x`"
    r = render(inline_code(line))
    assert r.tags == ["p", "code"]
    assert r.text.strip() == "/odw retry 1.2 ``` <img src=x> \uff20admin `x`"
