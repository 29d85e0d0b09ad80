"""Dependency clauses: turn a `Requires ...` sentence into dotted ids.

The grammar is the one real GIST roadmaps use (see docs/roadmap-format.md):
the clause runs from the word `Requires` to the end of its sentence, every
dotted id inside it is a dependency (`2.1.1b`: a letter may end an id),
`steps 2.1-2.3` (or `2.1.1 through 2.1.3`) expands within one parent, a range
across parents (`7.1.1-7.3.1`) is kept as a span the roadmap's ids fill in,
and `phase 2` / `phases 2, 3 and 5` / `phases 2-4` name whole phases by their
bare number. `A or B` is read as both, and the clause says it was an
alternative. An id qualified by another project's name (`Podbot Step 4.5`,
`OrthoConfig 5.2.3, 6.1`, `owner/repo 1.2`, `name#12`) is an external
reference: kept as written, never read as one of this roadmap's ids.
"""

from __future__ import annotations

import functools
import re

from app.core.values import Value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

_ID = r"\d+(?:\.\d+)+[a-z]?"
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
  | \bphases?\s+(?P<plo>\d+){_RANGE}(?P<phi>\d+)(?![\w.]*\d)
  | (?<![\w.])(?P<a>{_ID}){_RANGE}(?P<b>{_ID})(?!\w|\.\d)
  | \bphases?\s+(?P<phase>\d+(?:\.\d+)*(?![\d]))(?P<more>(?:{_SEP}\d+(?![.\d\w]))*)
  | (?<![\w.])(?P<id>{_ID})(?!\w|\.\d)
    """,
        re.IGNORECASE | re.VERBOSE,
    )


# Words of the clause grammar itself: never a project's name.
GRAMMAR_WORDS = frozenset(
    {"requires", "step", "steps", "phase", "phases", "task", "tasks", "and", "or", "see"}
    | {"depends", "dependencies", "after", "blocked", "builds", "on", "by"}
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
    """One dependency clause: its text, local ids and external references.

    `spans` are ranges across parents (`7.1.1-7.3.1`): the roadmap's task ids
    between the two ends fill them in. `alternative` says the clause offered a
    choice (`4.2.1 or 4.2.2`), which is read as both.
    """

    text: str
    local: tuple[str, ...]
    external: tuple[str, ...]
    spans: tuple[tuple[str, str], ...]
    alternative: bool

    def __init__(
        self,
        text: str,
        local: tuple[str, ...],
        external: tuple[str, ...],
        spans: tuple[tuple[str, str], ...] = (),
        alternative: bool = False,
    ) -> None:
        super().__init__(
            text=text, local=local, external=external, spans=spans, alternative=alternative
        )


def clauses(text: str) -> list[str]:
    """Every `Requires` clause in the text, without the leading word."""
    if "Requires" not in text:
        return []
    return [m.group("body") for m in _CLAUSE.finditer(text)]


def id_key(task_id: str) -> tuple[tuple[int, str], ...]:
    """Id order: `2.1.1` < `2.1.1a` < `2.1.1b` < `2.1.2` < `2.1.10`; a prefix comes first."""
    return tuple((int(p.rstrip(_LETTERS)), p.lstrip(_DIGITS)) for p in task_id.split("."))


_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_DIGITS = "0123456789"


def _expand_range(lo: str, hi: str, spans: list[tuple[str, str]]) -> list[str]:
    """The ids of a range within one parent; across parents the ends, and a span."""
    lo_parts, hi_parts = lo.split("."), hi.split(".")
    if len(lo_parts) != len(hi_parts):
        return [lo, hi]
    if lo_parts[:-1] == hi_parts[:-1] and (lo_parts[-1] + hi_parts[-1]).isdigit():
        if int(lo_parts[-1]) > int(hi_parts[-1]):
            return [lo, hi]
        parent = ".".join(lo_parts[:-1])
        return [f"{parent}.{n}" for n in range(int(lo_parts[-1]), int(hi_parts[-1]) + 1)]
    if id_key(lo) < id_key(hi):
        spans.append((lo, hi))
    return [lo, hi]


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


def dependencies_in(clause: str, spans: list[tuple[str, str]] | None = None) -> list[str]:
    """Local dotted ids named by one clause, in order, expanded, without repeats.

    Ranges across parents add their ends here and a span to `spans`.
    """
    spans = [] if spans is None else spans
    found: list[str] = []
    for m in _token().finditer(clause):
        if m.group("lo"):
            found.extend(_expand_range(m.group("lo"), m.group("hi"), spans))
        elif m.group("plo"):
            lo, hi = int(m.group("plo")), int(m.group("phi"))
            found.extend(map(str, range(lo, hi + 1)) if lo <= hi else (str(lo), str(hi)))
        elif m.group("a"):
            found.extend(_expand_range(m.group("a"), m.group("b"), spans))
        elif m.group("phase"):
            found.append(m.group("phase"))
            found.extend(re.findall(r"\d+", m.group("more") or ""))
        else:
            found.append(m.group("id"))
    return _unique(found)


# `or` between two of the clause's ids (or a phase number and an id).
_ALTERNATIVE = re.compile(
    r"\d[\w.]*\)?,?\s+or\s+(?:(?:the\s+)?(?:tasks?|steps?|phases?)\s+)?\d", re.IGNORECASE
)


def parse_clause(body: str, word: str = "Requires") -> Clause:
    """One clause from the text after its opening word (`word`, kept in its text)."""
    simple = _ONE_ID.fullmatch(body)
    if simple is not None:  # the common `Requires 1.2.3.`: nothing else to read
        dep = simple.group(1)
        return Clause(f"{word} {dep}", (dep,), ())
    external, rest = externals_in(body)
    spans: list[tuple[str, str]] = []
    local = tuple(dependencies_in(rest, spans))
    return Clause(
        text=" ".join(f"{word} {body}".split()),
        local=local,
        external=tuple(external),
        spans=tuple(spans),
        alternative=len(local) > 1 and _ALTERNATIVE.search(rest) is not None,
    )


def clauses_of(texts: Iterable[str]) -> list[Clause]:
    """Every clause of several texts, parsed, in order."""
    out: list[Clause] = []
    for text in texts:
        simple = _ONE_CLAUSE.fullmatch(text)
        if simple is not None:
            dep = simple.group(1)
            # `of`: one step, for the clause nearly every task of a large roadmap has
            out.append(
                Clause.of(
                    {"text": "Requires " + dep, "local": (dep,), "external": (), "spans": (),
                     "alternative": False}
                )
            )  # fmt: skip
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
