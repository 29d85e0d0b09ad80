"""Which lines of a comment are commands: a line is one only where a reader
sees it as a plain paragraph line that starts with `/odw`.

People quote a command to discuss it, paste one in a code block to show it,
or tuck text away in HTML (`<!-- -->`, `<details>`, `<pre>`, `<div>`); none of
it may run anything. Hand-written rules kept missing CommonMark's corners (a
comment opened mid-line, a lazy continuation of a quote), so the comment is
parsed by markdown-it-py, a CommonMark parser with GitHub's tables and
strikethrough, and a line counts only if it starts a line of a top-level
paragraph (not in a quote, list, table or HTML element) at its first
character. Comments without `/odw` are never parsed. Pure: no I/O.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from app.commands.grammar import PREFIX

# The source line itself: at most three spaces of indentation (four or a tab
# make a code block, or read as one), then the prefix as a word.
_COMMAND = re.compile(r"^ {0,3}" + re.escape(PREFIX) + r"(?:\s|$)")
_LINE_START = "odw_line_start"
# Opening and closing tags in raw HTML; comments are removed before counting.
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)\b[^>]*?(/?)>")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
# Elements that never hold content (HTML's void elements).
_VOID = frozenset(
    {
        "area", "base", "br", "col", "embed", "hr", "img",
        "input", "link", "meta", "param", "source", "track", "wbr",
    }
)  # fmt: skip


def _line_start(state: StateInline, silent: bool) -> bool:
    """Marks a line of inline text that starts with the prefix (never consumes)."""
    pos = state.pos
    if silent or state.level or not state.src.startswith(PREFIX, pos):
        return False
    start = state.src.rfind("\n", 0, pos) + 1
    if state.src[start:pos].strip(" \t"):
        return False  # mid-line
    token = state.push(_LINE_START, "", 0)
    token.meta = {"line": state.src.count("\n", 0, pos)}
    return False


@cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    md.inline.ruler.before("text", _LINE_START, _line_start)
    return md


def _html_depth(html: str) -> int:
    """How many elements `html` leaves open (negative: it closes more than it opens)."""
    depth = 0
    for closing, name, self_closing in _TAG.findall(_HTML_COMMENT.sub("", html)):
        if name.lower() in _VOID or self_closing:
            continue
        depth += -1 if closing else 1
    return depth


def _visible_line_starts(body: str) -> set[int]:
    """Source lines (0-based) a reader sees as plain paragraph lines starting with the prefix."""
    tokens = _parser().parse(body, {})
    found: set[int] = set()
    depth = 0  # HTML elements open around the current point
    plain = False  # inside a top-level paragraph
    for token in tokens:
        if token.type == "html_block":
            depth = max(0, depth + _html_depth(token.content))
        elif token.type == "paragraph_open":
            plain = token.level == 0
        elif token.type == "paragraph_close":
            plain = False
        elif token.type == "inline":
            depth = _walk_inline(token, plain, depth, found)
    return found


def _walk_inline(token: Token, plain: bool, depth: int, found: set[int]) -> int:
    first = token.map[0] if token.map else 0
    for child in token.children or []:
        if child.type == "html_inline":
            depth = max(0, depth + _html_depth(child.content))
        elif child.type == _LINE_START and plain and depth == 0:
            meta: dict[str, Any] = child.meta
            found.add(first + int(meta["line"]))
    return depth


def command_lines(body: str) -> list[str]:
    """The command lines of a Markdown comment, in order, stripped."""
    if PREFIX not in body:
        return []
    lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    candidates = [i for i, line in enumerate(lines) if _COMMAND.match(line)]
    if not candidates:
        return []
    visible = _visible_line_starts("\n".join(lines))
    return [lines[i].strip() for i in candidates if i in visible]
