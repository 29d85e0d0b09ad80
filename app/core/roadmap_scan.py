"""Reading a roadmap's lines: task lines, titles and their bullets, before any rule applies.

`parse_roadmap` (`roadmap.py`) finishes these drafts into tasks and checks them;
ticking a box (`roadmap_edit.py`) and the squash commit's subject need only
this module, so `odw integrate`, which does both on every landing, imports no
dataclass, dependency grammar or graph code.
"""

from __future__ import annotations

import re

TASK_LINE = re.compile(
    r"^(?P<indent>[ \t]*)[-*+][ \t]+\[(?P<mark>[ xX])\][ \t]+"
    r"(?P<id>\d+(?:\.\d+)+)\.?(?=[ \t]|$)[ \t]*(?P<title>.*)$"
)
HEADING = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]|$)")
LINE_BREAK = re.compile(r"\r\n|\r|\n")
SENTENCE_END = re.compile(r"(?<=\.)\s+")


def split_lines(text: str) -> list[tuple[str, str]]:
    """Lines with their own terminators; only CR, LF and CRLF break lines."""
    out: list[tuple[str, str]] = []
    pos = 0
    for m in LINE_BREAK.finditer(text):
        out.append((text[pos : m.start()], m.group()))
        pos = m.end()
    if pos < len(text) or not out:
        out.append((text[pos:], ""))
    return out


def indent_width(prefix: str) -> int:
    return len(prefix.expandtabs(4))


class Draft:
    """A task while its lines are read; slots keep the read of a large roadmap cheap."""

    __slots__ = ("bullets", "done", "id", "indent", "line", "parent", "title_open", "title_parts")

    def __init__(self, indent: int, tid: str, done: bool, line: int, title: str) -> None:
        self.indent = indent
        self.id = tid
        self.done = done
        self.line = line
        self.title_parts = [title]
        self.bullets: list[list[str]] = []
        self.title_open = True
        self.parent: Draft | None = None


def joined(parts: list[str]) -> str:
    """The lines of a title or bullet as one line, runs of white space folded."""
    return " ".join((parts[0] if len(parts) == 1 else " ".join(parts)).split())


def headline(title: str) -> str:
    """The title without its `Requires ...` and `See ...` sentences (commit subjects)."""
    kept = [
        part
        for part in SENTENCE_END.split(title)
        if part and not part.startswith(("Requires ", "See "))
    ]
    return " ".join(kept) or title


def scan(text: str) -> list[Draft]:
    """Read tasks line by line; an indented line belongs to the nearest task above it.

    Only CR, LF and CRLF break lines. This runs for every line of every roadmap
    read (`odw next` on 5,000 tasks reads 30,000 lines), so the common lines are
    told apart with string methods and only a task line meets a regular expression.
    """
    drafts: list[Draft] = []
    stack: list[Draft] = []
    indents: list[int] = []  # stack[i].indent, read on every line
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for number, line in enumerate(lines, 1):
        if not line or line.isspace():
            for d in stack:
                d.title_open = False
            continue
        stripped = line.lstrip(" \t")
        width = len(line) - len(stripped)
        first = stripped[0]
        if first == "#" and HEADING.match(line):
            stack.clear()
            indents.clear()
            continue
        indent = width if line.find("\t", 0, width) < 0 else indent_width(line[:width])
        while indents and indents[-1] >= indent:
            indents.pop()
            stack.pop()
        if first in "-*+" and stripped[1:2] in (" ", "\t"):
            item = stripped[1:].lstrip(" \t")  # the bullet's text
            if item[:1] == "[":
                m = TASK_LINE.match(line)
                if m:
                    d = Draft(indent, m["id"], m["mark"] in "xX", number, m["title"])
                    if stack:
                        d.parent = parent = stack[-1]
                        parent.title_open = False
                    drafts.append(d)
                    stack.append(d)
                    indents.append(indent)
                    continue
            if stack:
                owner = stack[-1]
                owner.title_open = False
                owner.bullets.append([item])
            continue
        if not stack:
            continue
        owner = stack[-1]
        if owner.title_open:
            owner.title_parts.append(line.strip())
        elif owner.bullets:
            owner.bullets[-1].append(line.strip())
        else:
            owner.bullets.append([line.strip()])
    return drafts


def task_headline(text: str, task_id: str) -> str | None:
    """The headline of the first task `task_id` in `text`, as `parse_roadmap` would give it."""
    draft = next((d for d in scan(text) if d.id == task_id), None)
    return None if draft is None else headline(joined(draft.title_parts))
