"""A roadmap reads the same whichever form its dependencies are written in (issue 31).

Each generated roadmap is written twice: once with its dependencies in the
forms authors use (`Depends on:`, `Dependencies: Task ...`, `Requires` late in
a bullet or on a continuation line, phase and id ranges, a step's opening
paragraph), once with each as one plain `Requires` clause under the task. Both
must read alike, and `odw next` must never offer a task whose written
dependencies are open.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.roadmap import Roadmap
from app.core.roadmap_parse import parse_roadmap
from app.core.selection import frontier

_PHASES, _STEPS, _TASKS = (1, 2, 3), (1, 2), (1, 2)
_IDS = [f"{p}.{s}.{t}" for p in _PHASES for s in _STEPS for t in _TASKS]
_STEP_IDS = [f"{p}.{s}" for p in _PHASES for s in _STEPS]


def _between(lo: str, hi: str) -> list[str]:
    """What an id range across steps means, by the rule: every task between its ends."""
    key = [tuple(map(int, i.split("."))) for i in (lo, hi)]
    return [i for i in _IDS if key[0] <= tuple(map(int, i.split("."))) <= key[1]]


# A dependency: (as an author writes it, what it names as a plain clause); `~` marks
# an id a range names only by lying between its ends.
_Dep = tuple[str, list[str]]


@st.composite
def _dependency(draw: st.DrawFn) -> _Dep:
    kind = draw(st.sampled_from(["task", "phases", "span", "step"]))
    if kind == "task":
        tid = draw(st.sampled_from(_IDS))
        return draw(st.sampled_from([tid, f"Task {tid}"])), [tid]
    if kind == "phases":
        lo, hi = sorted(draw(st.lists(st.sampled_from(_PHASES), min_size=2, max_size=2)))
        word = draw(st.sampled_from(["-", "\u2013", " to ", " through "]))
        return f"phases {lo}{word}{hi}", [str(p) for p in range(lo, hi + 1)]
    if kind == "span":
        ends = draw(st.lists(st.sampled_from(_IDS), min_size=2, max_size=2, unique=True))
        first, last = sorted(ends, key=lambda i: tuple(map(int, i.split("."))))
        if first.rpartition(".")[0] == last.rpartition(".")[0]:
            return f"{first}-{last}", [first, last]  # one step: the plain grammar's own range
        # The ids between the ends; a task inside the range does not wait for itself.
        return draw(st.sampled_from([f"{first}-{last}", f"{first} through {last}"])), [
            f"~{i}" if i not in (first, last) else i for i in _between(first, last)
        ]
    step = draw(st.sampled_from(_STEP_IDS))
    return f"step {step}", [step]


_FORMS = [
    "  - Depends on: {}.",
    "  - Dependencies: {}.",
    "  - Keep the seam narrow. Requires {}.",
    "  - Keep the seam narrow.\n    Requires {}.",
    "  - Depends on {}.",
]


@st.composite
def _roadmaps(draw: st.DrawFn) -> tuple[str, str, dict[str, list[str]]]:
    """(written in forms, written plainly, what each task's dependencies name)."""
    written: list[str] = []
    plain: list[str] = []
    named: dict[str, list[str]] = {}
    for p in _PHASES:
        written.append(f"## {p}. Phase {p}\n")
        plain.append(f"## {p}. Phase {p}\n")
        for s in _STEPS:
            opening = draw(st.lists(_dependency(), max_size=1))
            written.append(f"### {p}.{s}. Step\n")
            plain.append(f"### {p}.{s}. Step\n")
            if opening:
                written.append(f"This step builds the seam. Requires {opening[0][0]}.\n")
            for t in _TASKS:
                tid = f"{p}.{s}.{t}"
                done = draw(st.booleans())
                box = "x" if done else " "
                written.append(f"- [{box}] {tid}. Task {tid}")
                plain.append(f"- [{box}] {tid}. Task {tid}")
                deps = draw(st.lists(_dependency(), max_size=2))
                for dep in deps:
                    written.append(draw(st.sampled_from(_FORMS)).format(dep[0]))
                every = [*(opening if not done else []), *deps]
                names = [n.lstrip("~") for d in every for n in d[1] if n != f"~{tid}"]
                if names:
                    shown = [n if "." in n else f"phase {n}" for n in names]
                    plain.append(f"  - Requires {', '.join(shown)}.")
                named[tid] = names
    return "\n".join(written) + "\n", "\n".join(plain) + "\n", named


def _reading(rm: Roadmap) -> list[tuple[str, frozenset[str], frozenset[str]]]:
    return [
        (t.id, frozenset(t.requires), frozenset(t.self_references)) for t in rm.tasks if not t.done
    ]


def _next(rm: Roadmap) -> tuple[list[str], list[tuple[str, frozenset[str]]]]:
    """What `odw next` offers and what waits for what (lines differ between the two texts)."""
    f = frontier(rm)
    return [c.id for c in f.ready], [(b.id, frozenset(b.missing)) for b in f.blocked]


@settings(max_examples=150, deadline=None)
@given(_roadmaps())
def test_the_forms_read_as_their_plain_requires_clauses(case) -> None:  # type: ignore[no-untyped-def]
    written, plain, _ = case
    as_written, as_plain = parse_roadmap(written), parse_roadmap(plain)
    assert _reading(as_written) == _reading(as_plain)
    assert _next(as_written) == _next(as_plain)
    assert [p.kind for p in as_written.errors] == [p.kind for p in as_plain.errors]


@settings(max_examples=150, deadline=None)
@given(_roadmaps())
def test_next_never_offers_a_task_whose_written_dependencies_are_open(case) -> None:  # type: ignore[no-untyped-def]
    written, _, named = case
    rm = parse_roadmap(written)
    done = {t.id for t in rm.tasks if t.done}
    order = [t.id for t in rm.tasks]
    for c in frontier(rm).ready:
        for dep in named[c.id]:
            under = [i for i in order if i == dep or i.startswith(dep + ".")]
            if c.id.startswith(dep + "."):  # its own step or phase: the tasks before it
                under = under[: under.index(c.id)]
            assert set(under) <= done, f"{c.id} offered while {dep} is open"
