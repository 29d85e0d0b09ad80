"""Where authors write dependencies: every sentence of a text that names what a task waits for.

A dependency a person would honour is read; a sentence that looks like one and
cannot be read is reported. Two kinds of sentence are read (see
docs/roadmap-format.md):

- a clause opened by `Requires`, `Depends on` or `Dependencies` (a colon may
  follow), anywhere in the text: the author's own dependency grammar;
- prose, a sentence where `requires`, `depends on`, `blocked by`, `builds on`
  or `after` is followed by a dotted id or the word task, step or phase
  (`builds on 3.1`): read too, but always reported, since prose may mean less.

Code spans and fenced blocks are quoted text, never read. A step's or phase's
opening paragraph (under its heading, before its first task) is read the same
way and applies to each of its tasks (`openings`).
"""

from __future__ import annotations

import re

from app.core.requires import Clause, parse_clause
from app.core.values import Value

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,}).*?(?:^[ \t]*\1[^\n]*$|\Z)", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.DOTALL)
_QUOTED = "\x00"  # what quoted text becomes: no word, digit, dot or space

# The clause runs to the end of its sentence, as a `Requires` clause does.
_END = r"(?P<body>.*?)(?:\.(?=\s|$)|$)"
_FORMAL = re.compile(rf"\b(?P<word>Requires|Depends on|Dependencies)\b{_END}", re.DOTALL)
_PROSE = re.compile(
    rf"\b(?P<word>requires|depends on|blocked by|builds on|after)\b{_END}",
    re.DOTALL | re.IGNORECASE,
)
_MARKERS = ("requires", "depends on", "dependencies", "blocked by", "builds on", "after")
# What makes prose look like a dependency: an id (quoted or not) or a task, step or phase.
_LOOKS_LIKE = re.compile(r"\d+(?:\.\d+)+|\b(?:tasks?|steps?|phases?)\s+\S*\d", re.IGNORECASE)
_ID = re.compile(r"\d+(?:\.\d+)+[a-z]?")
_ONE_CLAUSE = re.compile(rf"Requires\s+({_ID.pattern})\s*\.?")
# A clause that says there is nothing to wait for.
_NOTHING = re.compile(r"[\s:\-\u2013\u2014]*(?:none|n/a|nothing)?[\s.]*", re.IGNORECASE)


class Sentence(Value):
    """A dependency clause found in a text, and where its opening word starts."""

    clause: Clause
    prose: bool  # opened by prose (`builds on 3.1`), not the dependency grammar
    offset: int
    quoted: tuple[str, ...]  # ids inside its code spans: quoted text, not read

    def __init__(self, clause: Clause, prose: bool, offset: int, quoted: tuple[str, ...]) -> None:
        super().__init__(clause=clause, prose=prose, offset=offset, quoted=quoted)


def _hide_quoted(text: str) -> str:
    """The text with fenced blocks and code spans replaced, character for character."""
    if "`" not in text and "~~~" not in text:
        return text

    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", _QUOTED, m.group())

    return _CODE.sub(blank, _FENCE.sub(blank, text))


def may_name_dependencies(text: str) -> bool:
    """Whether `sentences` could find anything: a quick test for the common text."""
    lowered = text.lower()
    return any(word in lowered for word in _MARKERS)


def sentences(text: str) -> list[Sentence]:
    """Every dependency clause of `text`, in order: the grammar's first, then prose."""
    simple = _ONE_CLAUSE.fullmatch(text)
    if simple is not None:  # `Requires 1.2.3.`, the bullet most tasks have: one step
        clause = Clause("Requires " + simple.group(1), (simple.group(1),), ())
        return [Sentence(clause, False, 0, ())]
    hidden = _hide_quoted(text)
    found: list[Sentence] = []
    rest = list(hidden)
    for m in _FORMAL.finditer(hidden):
        rest[m.start() : m.end()] = _QUOTED * (m.end() - m.start())
        if _NOTHING.fullmatch(m.group("body")):
            continue
        found.append(_sentence(text, hidden, m, prose=False))
    prose = "".join(rest)
    for m in _PROSE.finditer(prose):
        if _LOOKS_LIKE.search(text, m.end("word"), m.end("body")):
            found.append(_sentence(text, hidden, m, prose=True))
    found.sort(key=lambda s: s.offset)
    return found


def _sentence(text: str, hidden: str, m: re.Match[str], *, prose: bool) -> Sentence:
    """The clause read from the hidden text, shown as the author wrote it."""
    clause = parse_clause(m.group("body"), m.group("word"))
    start, end = m.start(), m.end("body")
    quoted: tuple[str, ...] = ()
    if _QUOTED in hidden[start:end]:
        pairs = zip(text[start:end], hidden[start:end], strict=True)
        quoted = tuple(_ID.findall("".join(c if h == _QUOTED else " " for c, h in pairs)))
    return Sentence(clause.replace(text=" ".join(text[start:end].split())), prose, start, quoted)


class Opening(Value):
    """The paragraph that opens a phase (`## 2.`) or step (`### 2.1.`) and the lines it governs."""

    heading: int  # the heading's line
    first: int  # the line `text` starts on
    end: int  # the first line after the phase or step (a heading of its level or above)
    text: str

    def __init__(self, heading: int, first: int, end: int, text: str) -> None:
        super().__init__(heading=heading, first=first, end=end, text=text)

    def line_of(self, offset: int) -> int:
        return self.first + self.text.count("\n", 0, offset)


_HEADING = re.compile(r"^[ \t]{0,3}(?P<level>#{1,6})(?:[ \t].*)?$", re.MULTILINE)
_NUMBERED = re.compile(r"[ \t]+(?:(?:Phase|Step)[ \t]+)?\d+(?:\.\d+)*\.?(?=[ \t:]|$)")
# A task line ends an opening paragraph (led by a line break: searched for quickly).
_TASK_START = re.compile(r"\n[ \t]*[-*+][ \t]+\[[ xX]\][ \t]+(?:Task[ \t]+)?\d")


def openings(text: str) -> list[Opening]:
    """The opening paragraphs of numbered phases and steps that may name dependencies."""
    if not may_name_dependencies(text):
        return []
    headings = []
    for m in _HEADING.finditer(text):
        level = len(m.group("level"))
        numbered = level in (2, 3) and _NUMBERED.match(text, m.end("level")) is not None
        headings.append((level, numbered, m.start(), m.end()))
    out = []
    for k, (level, numbered, start, end) in enumerate(headings):
        if not numbered:
            continue
        following = headings[k + 1][2] if k + 1 < len(headings) else len(text)
        task = _TASK_START.search(text, end, following)
        body = text[end + 1 : task.start() if task else following]
        if not may_name_dependencies(body):
            continue
        closer = next((h[2] for h in headings[k + 1 :] if h[0] <= level), len(text))
        line = text.count("\n", 0, start) + 1
        out.append(Opening(line, line + 1, text.count("\n", 0, closer) + 1, body))
    return out
