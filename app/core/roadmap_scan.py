"""Reading a roadmap's lines: task lines, titles and their bullets, before any rule applies.

`parse_roadmap` (`roadmap.py`) finishes these drafts into tasks and checks them;
ticking a box (`roadmap_edit.py`) and the squash commit's subject need only
this module, so `odw integrate`, which does both on every landing, imports no
dataclass, dependency grammar or graph code.
"""

from __future__ import annotations

import re
from itertools import accumulate, compress, count, repeat
from operator import add, lt, ne

from app.core.headline import headline

# The box and id of a task line: `TASK_LINE` and `_TASK_BODY` read the one grammar.
# An id may end in a letter (`2.1.1b`); `Task 1.1.1:` is a neighbouring dialect's form.
_BOX = r"\[(?P<mark>[ xX])\][ \t]+(?:Task[ \t]+)?(?P<id>\d+(?:\.\d+)+[a-z]?)[.:]?(?=[ \t]|$)"
_TASK = rf"(?P<indent>[ \t]*)[-*+][ \t]+{_BOX}[ \t]*(?P<title>.*)"
TASK_LINE = re.compile(rf"^{_TASK}$")
HEADING = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]|$)")
LINE_BREAK = re.compile(r"\r\n|\r|\n")


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
    """A task while its lines are read; slots keep the read of a large roadmap cheap.

    A title part or a bullet is text that may span lines: `joined` reads it as one line.
    """

    __slots__ = ("bullets", "done", "id", "indent", "line", "parent", "title_open", "title_parts")

    def __init__(
        self,
        indent: int,
        tid: str,
        done: bool,
        line: int,
        title_parts: list[str],
        bullets: list[str],
    ) -> None:
        self.indent = indent
        self.id = tid
        self.done = done
        self.line = line
        self.title_parts = title_parts
        self.bullets = bullets
        self.title_open = True
        self.parent: Draft | None = None


def joined(parts: str | list[str]) -> str:
    """A title's parts or a bullet's lines as one line, runs of white space folded."""
    return " ".join((parts if isinstance(parts, str) else " ".join(parts)).split())


# A task line and the lines after it that are surely its own (`body`): blank lines
# (spaces and tabs only), and lines indented past the task whose first character,
# after any bullet, shows they are no blank, heading or task line (`_START`).
# Any other line ends the match, and the rules read it.
_START = rf"(?:[^\s#*+\-\[]|(?!{re.sub(r'[?]P<[a-z]+>', '?:', _BOX)})\[)"
_DEEPER = r"(?P=indent)[ \t]++"
_TASK_BODY = re.compile(
    rf"^{_TASK}(?P<body>(?:\n(?:{_DEEPER}(?:[*+-][ \t]*+)?{_START}.*+|[ \t]*+$))*+)",
    re.MULTILINE,
)
_BLANK_LINE = re.compile(r"\n[ \t]*+(?=\n|\Z)")
_BULLET_START = re.compile(r"\n[ \t]*[-*+][ \t]")
_HEADINGS = re.compile(HEADING.pattern, re.MULTILINE)


class _Reader:
    """The tasks read so far and the open ones, innermost last, that later lines may join."""

    __slots__ = ("drafts", "indents", "stack")

    def __init__(self, drafts: list[Draft]) -> None:
        self.drafts = drafts
        self.stack: list[Draft] = []
        self.indents: list[int] = []  # stack[i].indent, read on every line

    def push(self, d: Draft) -> None:
        """A task line closes the tasks at its indent or deeper and nests in the one left."""
        stack, indents = self.stack, self.indents
        while indents and indents[-1] >= d.indent:
            indents.pop()
            stack.pop()
        if stack:
            d.parent = parent = stack[-1]
            parent.title_open = False
        stack.append(d)
        indents.append(d.indent)

    def lines(self, lines: list[str], first_number: int) -> None:
        """Read `lines`, the first being line `first_number`, one by one: the rules themselves."""
        stack, indents = self.stack, self.indents
        for number, line in enumerate(lines, first_number):
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
                        d = Draft(indent, m["id"], m["mark"] in "xX", number, [m["title"]], [])
                        self.drafts.append(d)
                        self.push(d)
                        continue
                if stack:
                    owner = stack[-1]
                    owner.title_open = False
                    owner.bullets.append(item)
                continue
            if not stack:
                continue
            owner = stack[-1]
            if owner.title_open:
                owner.title_parts.append(line.strip())
            elif owner.bullets:
                owner.bullets[-1] += "\n" + line.strip()
            else:
                owner.bullets.append(line.strip())


def normalized(text: str) -> str:
    """Only CR, LF and CRLF break lines; after this only LF does."""
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


_SHORT = 160  # characters: about three tasks with a bullet each


def scan(text: str) -> list[Draft]:
    """Read tasks; an indented line belongs to the nearest task above it.

    Both readers apply the same rules; a text of a task or two is read faster
    line by line, where building the tasks column by column costs more than it saves.
    """
    return scan_lines(text) if len(text) < _SHORT else scan_tasks(text)


def scan_lines(text: str) -> list[Draft]:
    """Read one line at a time (`_Reader.lines`): the rules that `scan_tasks` shortcuts."""
    reader = _Reader([])
    reader.lines(normalized(text).split("\n"), 1)
    return reader.drafts


def scan_tasks(text: str) -> list[Draft]:
    """Read a task at a time: `scan_lines`'s drafts in about half its time on a long text.

    `odw next` on 5,000 tasks reads 20,000 lines, so one regular expression
    cuts each task line with the lines that are surely its own (`_TASK_BODY`),
    the tasks are built column by column, and only the lines left between them
    (headings, dedented or unusual lines) meet the rules in `_Reader.lines`.
    A part of a title or bullet may hold several lines: only `joined` reads it.
    """
    # A line break more makes every piece between two tasks, or after the last,
    # start and end at one; the blank line it adds closes titles, which is no change.
    first, *pieces = _TASK_BODY.split(normalized(text) + "\n")
    prefixes, bodies, betweens = pieces[0::6], pieces[4::6], pieces[5::6]
    newline = repeat("\n")
    steps = map(add, map(str.count, bodies, newline), map(str.count, betweens, newline))
    # Task k is on line numbers[k]. Before the first task none is open: nothing to read.
    numbers = list(accumulate(steps, initial=first.count("\n") + 1))
    bullets = list(map(_BULLET_START.split, bodies))
    heads = list(map(list.pop, bullets, repeat(0)))  # what comes before the first bullet
    drafts = list(
        map(
            Draft,
            map(len if "\t" not in "".join(prefixes) else indent_width, prefixes),
            pieces[2::6],
            map(ne, pieces[1::6], repeat(" ")),
            numbers,
            map(list, zip(pieces[3::6], heads, strict=True)),
            bullets,
        )
    )
    # A blank line ends a title: the text after it, before any bullet, is a bullet.
    # Each head starts with a line break, so joined they keep their lines apart.
    blanks = map(_BLANK_LINE.search, heads) if _BLANK_LINE.search("".join(heads)) else ()
    for k in compress(count(), blanks):
        d, (title, loose) = drafts[k], _BLANK_LINE.split(heads[k], 1)
        d.title_parts[1] = title
        if loose and not loose.isspace():
            d.bullets.insert(0, loose)
    reader = _Reader(drafts)
    if len(set(prefixes)) > 1:  # tasks at several indents: each finds its parent
        for k, d in enumerate(drafts):
            reader.push(d)
            if len(betweens[k]) > 1:
                _read_between(reader, d, bodies[k], betweens[k], numbers[k + 1])
    else:  # every task line closes the one before it, and none has a parent
        for k in compress(count(), map(lt, repeat(1), map(len, betweens))):
            d = drafts[k]
            reader.stack[:] = [d]
            reader.indents[:] = [d.indent]
            _read_between(reader, d, bodies[k], betweens[k], numbers[k + 1])
    return drafts


def _read_between(reader: _Reader, d: Draft, body: str, between: str, following: int) -> None:
    """By the rules, the lines after task `d`'s own, up to the task on line `following`.

    No task line is among them, so once a heading closes every task the lines
    after it change nothing, and are not read.
    """
    heading = _HEADINGS.search(between)
    end = heading.start() if heading else len(between)
    if end > 1:  # lines before any heading
        d.title_open = not d.bullets and not _BLANK_LINE.search(body)
        lines = between[:end].split("\n")[1:-1]
        reader.lines(lines, following - between.count("\n") + 1)
    if heading:
        reader.stack.clear()
        reader.indents.clear()


def task_headline(text: str, task_id: str) -> str | None:
    """The headline of the first task `task_id` in `text`, as `parse_roadmap` would give it."""
    draft = next((d for d in scan(text) if d.id == task_id), None)
    return None if draft is None else headline(joined(draft.title_parts))
