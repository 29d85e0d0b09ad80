"""Dependency clauses: turn a `Requires ...` sentence into dotted ids.

The grammar is the one real GIST roadmaps use (see docs/roadmap-format.md):
the clause runs from the word `Requires` to the end of its sentence, every
dotted id inside it is a dependency, `steps 2.1-2.3` (or `2.1.1 through
2.1.3`) expands within one parent, and `phase 2` / `phases 2, 3 and 5` name
whole phases by their bare number. An id qualified by another project's name
(`Podbot Step 4.5`, `OrthoConfig 5.2.3, 6.1`, `owner/repo 1.2`, `name#12`) is
an external reference: kept as written, never read as one of this roadmap's ids.
"""

from __future__ import annotations

import functools
import re

from app.core.values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_ID = r"\d+(?:\.\d+)+"
_SEP = r"\s*(?:,\s*and\s+|,\s*or\s+|,|\band\b|\bor\b|&)\s*"
_RANGE = r"\s*(?:[-\u2013\u2014]|\bthrough\b|\bto\b)\s*"

# The clause ends at a period followed by whitespace or the end of the text;
# the dots inside a dotted id are followed by a digit, so they never end it.
_CLAUSE = re.compile(r"\bRequires\b(?P<body>.*?)(?:\.(?=\s|$)|$)", re.DOTALL)


# The grammar's larger expressions are compiled on first use: a clause naming one
# id never needs them, and `odw integrate` reads roadmaps only for a title.
@functools.cache
def _token() -> re.Pattern[str]:
    return re.compile(
        rf"""
    \bsteps?\s+(?P<lo>{_ID})\s*[-\u2013\u2014]\s*(?P<hi>{_ID})(?![\w.]*\d)
  | (?<![\w.])(?P<a>{_ID}){_RANGE}(?P<b>{_ID})(?!\w|\.\d)
  | \bphases?\s+(?P<phase>\d+(?:\.\d+)*(?![\d]))(?P<more>(?:{_SEP}\d+(?![.\d\w]))*)
  | (?<![\w.])(?P<id>{_ID})(?!\w|\.\d)
    """,
        re.IGNORECASE | re.VERBOSE,
    )


# Words of the clause grammar itself: never a project's name.
GRAMMAR_WORDS = frozenset(
    {"requires", "step", "steps", "phase", "phases", "task", "tasks", "and", "or", "see"}
)
_NUM = r"\d+(?:\.\d+)*(?![\w.]*\d)"
_ITEM = rf"{_NUM}(?:{_RANGE}{_NUM})?"


@functools.cache
def _external() -> re.Pattern[str]:
    return re.compile(
        rf"""
    (?<![\w./#-])(?P<issue>[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_.-]+)?\#\d+)
  | (?<![\w./#-])(?P<qual>[A-Za-z][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+|[A-Z][A-Za-z0-9_-]*)
    (?P<kind>\s+(?i:steps?|phases?|tasks?)\b)?\s+
    (?P<items>{_ITEM}(?:{_SEP}{_ITEM})*)
    """,
        re.VERBOSE,
    )


@functools.cache
def _item() -> re.Pattern[str]:
    return re.compile(_ITEM)


_MAYBE_EXTERNAL = re.compile(r"[A-Z/#]")
_ONE_ID = re.compile(rf"\s*({_ID})\s*")
# A whole text that is one clause naming one id (`Requires 1.2.3.`), the form most
# tasks use: read in one step, with the result the general path gives.
_ONE_CLAUSE = re.compile(rf"Requires\s+({_ID})\s*\.?")


class Clause(Value):
    """One `Requires` clause: its text, local ids and external references."""

    text: str
    local: tuple[str, ...]
    external: tuple[str, ...]

    def __init__(self, text: str, local: tuple[str, ...], external: tuple[str, ...]) -> None:
        super().__init__(text=text, local=local, external=external)


def clauses(text: str) -> list[str]:
    """Every `Requires` clause in the text, without the leading word."""
    if "Requires" not in text:
        return []
    return [m.group("body") for m in _CLAUSE.finditer(text)]


def _expand_range(lo: str, hi: str) -> list[str]:
    lo_parts, hi_parts = lo.split("."), hi.split(".")
    same_parent = len(lo_parts) == len(hi_parts) and lo_parts[:-1] == hi_parts[:-1]
    if not same_parent or int(lo_parts[-1]) > int(hi_parts[-1]):
        return [lo, hi]
    parent = ".".join(lo_parts[:-1])
    return [f"{parent}.{n}" for n in range(int(lo_parts[-1]), int(hi_parts[-1]) + 1)]


def externals_in(clause: str) -> tuple[list[str], str]:
    """External references as written, and the clause with them blanked out."""
    if _MAYBE_EXTERNAL.search(clause) is None:
        return [], clause  # no capital, slash or hash: nothing can name another project
    found: list[str] = []
    kept = list(clause)
    for m in _external().finditer(clause):
        if m.group("issue"):
            found.append(m.group("issue"))
        else:
            if m.group("qual").lower() in GRAMMAR_WORDS:
                continue
            head = " ".join((m.group("qual") + (m.group("kind") or "")).split())
            found.extend(
                f"{head} {' '.join(item.group().split())}"
                for item in _item().finditer(m.group("items"))
            )
        kept[m.start() : m.end()] = " " * (m.end() - m.start())
    return _unique(found), "".join(kept)


def dependencies_in(clause: str) -> list[str]:
    """Local dotted ids named by one clause, in order, expanded, without repeats."""
    found: list[str] = []
    for m in _token().finditer(clause):
        if m.group("lo"):
            found.extend(_expand_range(m.group("lo"), m.group("hi")))
        elif m.group("a"):
            found.extend(_expand_range(m.group("a"), m.group("b")))
        elif m.group("phase"):
            found.append(m.group("phase"))
            found.extend(re.findall(r"\d+", m.group("more") or ""))
        else:
            found.append(m.group("id"))
    return _unique(found)


def parse_clause(body: str) -> Clause:
    simple = _ONE_ID.fullmatch(body)
    if simple is not None:  # the common `Requires 1.2.3.`: nothing else to read
        dep = simple.group(1)
        return Clause("Requires " + dep, (dep,), ())
    external, rest = externals_in(body)
    return Clause(
        text=" ".join(("Requires " + body).split()),
        local=tuple(dependencies_in(rest)),
        external=tuple(external),
    )


def clauses_of(texts: Iterable[str]) -> list[Clause]:
    """Every clause of several texts, parsed, in order."""
    out: list[Clause] = []
    for text in texts:
        simple = _ONE_CLAUSE.fullmatch(text)
        if simple is not None:
            dep = simple.group(1)
            # `of`: one step, for the clause nearly every task of a large roadmap has
            out.append(Clause.of({"text": "Requires " + dep, "local": (dep,), "external": ()}))
        else:
            out.extend(parse_clause(body) for body in clauses(text))
    return out


def requires_of(texts: list[str]) -> list[str]:
    """All local dependencies named by the `Requires` clauses of several texts."""
    return _unique(d for c in clauses_of(texts) for d in c.local)


def external_of(texts: list[str]) -> list[str]:
    """All external references named by the `Requires` clauses of several texts."""
    return _unique(d for c in clauses_of(texts) for d in c.external)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
