"""Dependency clauses: turn a `Requires ...` sentence into dotted ids.

The grammar is the one real GIST roadmaps use (see docs/roadmap-format.md):
the clause runs from the word `Requires` to the end of its sentence, every
dotted id inside it is a dependency, `steps 2.1-2.3` expands within one parent,
and `phase 2` / `phases 2, 3 and 5` name whole phases by their bare number.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_ID = r"\d+(?:\.\d+)+"
_SEP = r"\s*(?:,\s*and\s+|,\s*or\s+|,|\band\b|\bor\b|&)\s*"

# The clause ends at a period followed by whitespace or the end of the text;
# the dots inside a dotted id are followed by a digit, so they never end it.
_CLAUSE = re.compile(r"\bRequires\b(?P<body>.*?)(?:\.(?=\s|$)|$)", re.DOTALL)

_TOKEN = re.compile(
    rf"""
    \bsteps?\s+(?P<lo>{_ID})\s*[-\u2013\u2014]\s*(?P<hi>{_ID})(?![\w.]*\d)
  | \bphases?\s+(?P<phase>\d+(?:\.\d+)*(?![\d]))(?P<more>(?:{_SEP}\d+(?![.\d\w]))*)
  | (?<![\w.])(?P<id>{_ID})(?!\w|\.\d)
    """,
    re.IGNORECASE | re.VERBOSE,
)


def clauses(text: str) -> list[str]:
    """Every `Requires` clause in the text, without the leading word."""
    return [m.group("body") for m in _CLAUSE.finditer(text)]


def _expand_range(lo: str, hi: str) -> list[str]:
    lo_parts, hi_parts = lo.split("."), hi.split(".")
    same_parent = len(lo_parts) == len(hi_parts) and lo_parts[:-1] == hi_parts[:-1]
    if not same_parent or int(lo_parts[-1]) > int(hi_parts[-1]):
        return [lo, hi]
    parent = ".".join(lo_parts[:-1])
    return [f"{parent}.{n}" for n in range(int(lo_parts[-1]), int(hi_parts[-1]) + 1)]


def dependencies_in(clause: str) -> list[str]:
    """Dotted ids named by one clause, in order, expanded, without repeats."""
    found: list[str] = []
    for m in _TOKEN.finditer(clause):
        if m.group("lo"):
            found.extend(_expand_range(m.group("lo"), m.group("hi")))
        elif m.group("phase"):
            found.append(m.group("phase"))
            found.extend(re.findall(r"\d+", m.group("more") or ""))
        else:
            found.append(m.group("id"))
    return _unique(found)


def requires_of(texts: list[str]) -> list[str]:
    """All dependencies named by the `Requires` clauses of several texts."""
    out: list[str] = []
    for text in texts:
        for clause in clauses(text):
            out.extend(dependencies_in(clause))
    return _unique(out)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
