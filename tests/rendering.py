"""What GitHub makes of the Markdown ODW writes: the test oracle for rendering.

cmark-gfm (through `cmarkgfm`) is the renderer GitHub itself uses for comments,
pull request bodies and check run output, with GitHub's extensions (autolinks,
tables, strikethrough, task lists). It runs here with raw HTML kept, the worst
case (GitHub keeps allowlisted tags such as `<img>`, `<a>` and `<details>`).
GitHub then links mentions and issue references in the rendered text outside
`pre`, `code` and `a` (html-pipeline's MentionFilter and issue reference filter
skip those); the patterns below are at least as broad as GitHub's, so text
they do not match pings and references nobody.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

import cmarkgfm
from cmarkgfm.cmark import Options

# `@login`, `@org/team`: an @ not preceded by a word character, then a login's first character.
MENTION = re.compile(r"(?<![0-9A-Za-z_])@[0-9A-Za-z]")
# `#12`, `org/repo#12`, `GH-12`.
ISSUE_REFERENCE = re.compile(r"#[0-9]|\bGH-[0-9]", re.I)
# A closing keyword before a reference (GitHub's keywords; a URL closes only as
# a link, which `links` catches).
CLOSING = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b:?\s+(?:\S*#[0-9]|GH-[0-9])", re.I
)


_INERT = frozenset({"code", "pre", "a"})


@dataclass
class Rendered:
    html: str
    tags: list[str] = field(default_factory=list)  # every element opened, in order
    links: list[str] = field(default_factory=list)  # every <a href>
    images: list[str] = field(default_factory=list)  # every <img src> (and other loaders)
    comments: list[str] = field(default_factory=list)
    text: str = ""  # the text a reader sees, entities decoded
    prose: str = ""  # the part of it outside code, pre and links (where GitHub links mentions)


class _Reader(HTMLParser):
    def __init__(self, out: Rendered) -> None:
        super().__init__(convert_charrefs=True)
        self.out = out
        self.chunks: list[str] = []
        self.prose: list[str] = []
        self.inert = 0  # open code, pre and a elements

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.out.tags.append(tag)
        self.inert += tag in _INERT
        values = dict(attrs)
        if tag == "a":
            self.out.links.append(values.get("href") or "")
        if tag in ("img", "picture", "source", "video", "audio", "iframe", "object", "embed"):
            self.out.images.append(values.get("src") or values.get("srcset") or tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        self.inert -= tag in _INERT

    def handle_endtag(self, tag: str) -> None:
        self.inert -= tag in _INERT

    def handle_comment(self, data: str) -> None:
        self.out.comments.append(data)

    def handle_data(self, data: str) -> None:
        self.chunks.append(data)
        if self.inert <= 0:
            self.prose.append(data)


def render(markdown: str) -> Rendered:
    """`markdown` as GitHub's renderer makes it, read back as elements and text."""
    html = cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    out = Rendered(html)
    reader = _Reader(out)
    reader.feed(html)
    reader.close()
    out.text = "".join(reader.chunks)
    out.prose = "".join(reader.prose)
    return out


def renders_as_text(
    markdown: str, *, allowed_links: tuple[str, ...] = (), allowed_tags: tuple[str, ...] = ()
) -> list[str]:
    """What in `markdown` GitHub would turn into more than text (empty: nothing)."""
    r = render(markdown)
    problems = [f"image {src}" for src in r.images]
    problems += [f"link {href}" for href in r.links if href not in allowed_links]
    problems += [f"comment {c!r}" for c in r.comments]
    problems += [f"mention {m.group()!r}" for m in MENTION.finditer(r.prose)]
    problems += [f"issue reference {m.group()!r}" for m in ISSUE_REFERENCE.finditer(r.prose)]
    problems += [f"closing keyword {m.group()!r}" for m in CLOSING.finditer(r.prose)]
    hidden = {"details", "summary", "div", "span", "sub", "sup", "picture", "script", "style"}
    problems += [f"element <{t}>" for t in r.tags if t in hidden and t not in allowed_tags]
    return problems
