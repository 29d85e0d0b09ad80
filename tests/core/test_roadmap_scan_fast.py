"""Reading a task at a time gives the drafts that reading line by line gives.

`scan_tasks` takes shortcuts through the rules that `scan_lines` applies to every
line; whatever the text, the two must agree on every field a roadmap is built from.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from app.core.roadmap_scan import Draft, joined, scan, scan_lines, scan_tasks

Seen = tuple[str, bool, int, int, int | None, str, list[str]]


def seen(drafts: list[Draft]) -> list[Seen]:
    """What `parse_roadmap` reads of each draft; a parent by its line, which is unique."""
    return [
        (
            d.id,
            d.done,
            d.line,
            d.indent,
            None if d.parent is None else d.parent.line,
            joined(d.title_parts),
            [joined(b) for b in d.bullets],
        )
        for d in drafts
    ]


INDENTS = st.sampled_from(
    ["", "", "", " ", "  ", "  ", "   ", "    ", "      ", "\t", " \t", "\t "]
)
GAPS = st.sampled_from([" ", " ", "\t", "  "])
MARKERS = st.sampled_from(["-", "-", "*", "+"])
WORDS = st.lists(
    st.sampled_from(
        ["a", "Task", "Requires", "1.2", "[x]", "[ ]", "#", "-", "*x", "`c`", "\xa0b", "é", "S:"]
    ),
    min_size=1,
    max_size=4,
).map(" ".join)
IDS = st.lists(st.integers(1, 3).map(str), min_size=2, max_size=4).map(".".join)


@st.composite
def task_line(draw: st.DrawFn) -> str:
    title = draw(st.one_of(st.just(""), st.builds(lambda g, w: g + w, GAPS, WORDS)))
    return (
        f"{draw(INDENTS)}{draw(MARKERS)}{draw(GAPS)}[{draw(st.sampled_from(' xX'))}]"
        f"{draw(GAPS)}{draw(IDS)}{draw(st.sampled_from(['', '.']))}{title}"
    )


LINES = st.one_of(
    task_line(),
    task_line(),
    st.builds(lambda i, m, g, w: f"{i}{m}{g}{w}", INDENTS, MARKERS, GAPS, WORDS),  # bullets
    st.builds(lambda i, w: f"{i}{w}", INDENTS, WORDS),  # title or bullet continuations, prose
    st.sampled_from(["", "", " ", "\t ", "\xa0", "\x0c"]),  # blank lines
    st.builds(  # headings, indented ones too, and lines that only look like one
        lambda i, h, w: f"{i}{h}{w}",
        st.sampled_from(["", " ", "   ", "    ", "\t"]),
        st.sampled_from(["#", "##", "###", "#######", "#x"]),
        st.sampled_from(["", " Phase", "\tStep"]),
    ),
    st.builds(lambda i, m: f"{i}{m}", INDENTS, st.sampled_from(["-", "- ", "-x", "- [ ] no id"])),
)
BREAKS = st.sampled_from(["\n", "\n", "\n", "\r\n", "\r"])


@st.composite
def roadmaps(draw: st.DrawFn) -> str:
    lines = draw(st.lists(LINES, max_size=40))
    return "".join(line + draw(BREAKS) for line in lines) + draw(st.sampled_from(["", "tail"]))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(roadmaps())
@example("- [ ] 1.1. A\n  wraps\n\n  loose\n  - b\n    more\n\n  - c\n")
@example("- [ ] 1.1. A\n  - [ ] 1.1.1. B\n  - back in A\n# H\n  - after a heading\n")
@example("  - [x] 1.1 A\n -\tb\n   # not a heading\n  \t- [ ] 1.2 C\r\n\r\n\tD")
def test_a_task_at_a_time_reads_what_line_by_line_reads(text: str) -> None:
    expected = seen(scan_lines(text))
    assert seen(scan_tasks(text)) == expected
    assert seen(scan(text)) == expected


def test_every_line_kind_is_read() -> None:
    """Wrapped titles, loose text, bullets, nesting and headings read as a person reads them."""
    text = (
        "intro\n- [ ] 1.1. A title\n  that wraps.\n\n  Loose text.\n  - Requires 1.2.\n"
        "    still\n  - [x] 1.1.1 Child\n    - its bullet\n## 2\n* [X] 2.1 B\r\n"
    )
    drafts = scan_tasks(text)
    assert seen(drafts) == [
        ("1.1", False, 2, 0, None, "A title that wraps.", ["Loose text.", "Requires 1.2. still"]),
        ("1.1.1", True, 8, 2, 2, "Child", ["its bullet"]),
        ("2.1", True, 11, 0, None, "B", []),
    ]
    assert seen(drafts) == seen(scan_lines(text))


def test_every_corpus_roadmap_reads_the_same(corpus: Path) -> None:
    roadmaps = sorted(corpus.glob("*.md"))
    assert roadmaps, f"no roadmaps in {corpus}"
    for path in roadmaps:
        text = path.read_text("utf-8")
        expected = seen(scan_lines(text))
        assert expected, path.name
        assert seen(scan_tasks(text)) == expected, path.name
        assert seen(scan(text)) == expected, path.name


@pytest.mark.parametrize("size", [0, 1, 100, 159, 160, 161, 2000], ids=lambda n: f"{n} chars")
def test_short_and_long_texts_read_the_same(size: int) -> None:
    """`scan` switches readers by length; either side of the switch gives the same."""
    unit = "- [ ] 1.1. A\n  b\n  - c\n"
    text = (unit * (size // len(unit) + 1))[:size]
    assert seen(scan(text)) == seen(scan_lines(text)) == seen(scan_tasks(text))
