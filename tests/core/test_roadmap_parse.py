"""Parsing GIST roadmaps: tasks, wrapping, requires, success, addenda, problems."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.roadmap_parse import parse_roadmap
from app.core.roadmap_scan import task_headline

BASIC = """\
# Roadmap

## 1. Foundations

Idea: build the base.

### 1.1. Parse things

- [x] 1.1.1. Parse the roadmap
  into tasks across lines.
  - Success: tasks come out in order.
- [ ] 1.1.2 Select work. Requires 1.1.1. See docs/design.md.
  - [ ] Verify selection order
  - Keep it pure.
- [X] 1.1.3. Tick boxes.
  - Requires 1.1.1 and 1.1.2.

## 2. Service

### 2.1. Serve

- [ ] 2.1.1. Serve webhooks.
  - Requires phase 1.
  - Success criteria: webhooks are answered.
- [ ] 2.1.2. Drift gates.
  - Requires steps 1.1-1.1 and step 2.1.
"""


def _task(text: str, tid: str):
    rm = parse_roadmap(text)
    found = [t for t in rm.tasks if t.id == tid]
    assert found, f"{tid} not parsed"
    return found[0]


def test_tasks_in_document_order_with_lines() -> None:
    rm = parse_roadmap(BASIC)
    assert [(t.id, t.line, t.done) for t in rm.tasks] == [
        ("1.1.1", 9, True),
        ("1.1.2", 12, False),
        ("1.1.3", 15, True),
        ("2.1.1", 22, False),
        ("2.1.2", 25, False),
    ]
    assert rm.valid
    # 2.1.2 names step 2.1, which contains it: a warning, not a dependency.
    assert [(w.kind, w.ids) for w in rm.warnings] == [("self-reference", ("2.1.2", "2.1"))]


FIELD_CASES = [
    ("wrapped title joined", "1.1.1", "title", "Parse the roadmap into tasks across lines."),
    ("success bullet", "1.1.1", "success", "tasks come out in order."),
    ("success criteria bullet", "2.1.1", "success", "webhooks are answered."),
    ("inline requires", "1.1.2", "requires", ("1.1.1",)),
    ("bullet requires", "1.1.3", "requires", ("1.1.1", "1.1.2")),
    ("phase prefix kept", "2.1.1", "requires", ("1",)),
    ("range kept, own step read as its tasks before", "2.1.2", "requires", ("1.1", "2.1.1")),
    ("own step recorded", "2.1.2", "self_references", ("2.1",)),
    (
        "checklist without id is context",
        "1.1.2",
        "context",
        ("[ ] Verify selection order", "Keep it pure."),
    ),
    ("capital X is done", "1.1.3", "done", True),
]


@pytest.mark.parametrize(
    ("tid", "attr", "expected"), [c[1:] for c in FIELD_CASES], ids=[c[0] for c in FIELD_CASES]
)
def test_task_fields(tid: str, attr: str, expected: object) -> None:
    assert getattr(_task(BASIC, tid), attr) == expected


def test_id_without_trailing_dot_and_two_part_id() -> None:
    rm = parse_roadmap("- [ ] 1.1 Two parts\n- [x] 3.2.1 No dot\n- [ ] 7 Not a task\n")
    assert [(t.id, t.title) for t in rm.tasks] == [("1.1", "Two parts"), ("3.2.1", "No dot")]


def test_addendum_under_ticked_parent() -> None:
    text = (
        "- [x] 1.2.3. Parent\n"
        "  - [ ] 1.2.3.1. Follow-up\n"
        "  - [x] 1.2.3.2. Done follow-up\n"
        "- [ ] 1.2.4. Next\n"
        "  - [ ] 1.2.4.1. Nested under open parent\n"
    )
    rm = parse_roadmap(text)
    assert {t.id: t.addendum_of for t in rm.tasks} == {
        "1.2.3": None,
        "1.2.3.1": "1.2.3",
        "1.2.3.2": "1.2.3",
        "1.2.4": None,
        "1.2.4.1": None,
    }
    assert not rm.fully_complete("1.2.3")


def test_nested_task_with_unrelated_id_is_not_an_addendum() -> None:
    rm = parse_roadmap("- [x] 1.2.3. Parent\n  - [ ] 4.5.6. Elsewhere\n")
    assert _task("- [x] 1.2.3. Parent\n  - [ ] 4.5.6. Elsewhere\n", "4.5.6").addendum_of is None
    assert rm.valid


def test_crlf_and_tabs() -> None:
    text = "- [ ] 1.1.1. A\r\n\t- Requires 2.2.2.\r\n- [x] 2.2.2. B\r\n"
    rm = parse_roadmap(text)
    assert [(t.id, t.requires, t.line) for t in rm.tasks] == [
        ("1.1.1", ("2.2.2",), 1),
        ("2.2.2", (), 3),
    ]


def test_heading_ends_a_task() -> None:
    text = "- [ ] 1.1.1. A\n## 2. Next\n  - Requires 9.9.9.\n"
    assert _task(text, "1.1.1").requires == ()


def test_duplicate_ids_are_errors_with_every_line() -> None:
    rm = parse_roadmap("- [ ] 1.1.1. A\n- [ ] 1.1.2. B\n- [x] 1.1.1. Again\n- [ ] 1.1.1. Thrice\n")
    assert [(e.kind, e.ids, e.lines) for e in rm.errors] == [
        ("duplicate-id", ("1.1.1",), (1, 3, 4))
    ]


def test_cycle_is_an_error_naming_ids_and_lines() -> None:
    text = (
        "- [ ] 1.1.1. A. Requires 1.1.3.\n"
        "- [ ] 1.1.2. B\n"
        "- [ ] 1.1.3. C. Requires 1.1.4.\n"
        "- [ ] 1.1.4. D. Requires 1.1.1.\n"
        "- [ ] 1.1.5. Self. Requires 1.1.5.\n"
    )
    rm = parse_roadmap(text)
    assert [(e.kind, e.ids, e.lines) for e in rm.errors] == [
        ("cycle", ("1.1.1", "1.1.3", "1.1.4"), (1, 3, 4)),
        ("cycle", ("1.1.5",), (5,)),
    ]
    assert rm.errors[0].message == (
        "dependency cycle among open tasks: 1.1.1 -> 1.1.3 -> 1.1.4 -> 1.1.1 "
        "(`A -> B`: A waits for B). Edges: "
        "1.1.1 -> 1.1.3 from 'Requires 1.1.3' on line 1; "
        "1.1.3 -> 1.1.4 from 'Requires 1.1.4' on line 3; "
        "1.1.4 -> 1.1.1 from 'Requires 1.1.1' on line 4. "
        "Blocked: 1.1.1, 1.1.3, 1.1.4; the rest of the roadmap is still scheduled"
    )


def test_cycle_through_a_prefix() -> None:
    text = "- [ ] 1.1.1. A. Requires phase 2.\n- [ ] 2.1.1. B. Requires step 1.1.\n"
    rm = parse_roadmap(text)
    assert [e.ids for e in rm.errors] == [("1.1.1", "2.1.1")]


def test_prefix_containing_the_task_itself_means_its_tasks_before_it_with_a_warning() -> None:
    text = (
        "- [ ] 13.3.1. A\n- [x] 13.3.2. B\n- [ ] 13.3.3. C. Requires steps 13.1-13.3.\n"
        "- [x] 13.1.1. D\n- [ ] 13.2.1. E\n- [ ] 13.3.4. F\n"
    )
    rm = parse_roadmap(text)
    assert rm.valid
    task = _task(text, "13.3.3")
    assert task.requires == ("13.1", "13.2", "13.3.1", "13.3.2")
    # 13.3.1, before it in the step, holds it; 13.3.4, after it, does not
    assert rm.missing(task) == ["13.2", "13.3.1"]
    assert [(w.kind, w.ids, w.lines) for w in rm.warnings] == [
        ("self-reference", ("13.3.3", "13.3"), (3,))
    ]
    assert "Requires steps 13.1-13.3" in rm.warnings[0].message


def test_unknown_dependency_is_a_warning_and_blocks() -> None:
    rm = parse_roadmap("- [ ] 1.1.1. A\n  - Requires 9.9.9 and 1.1.2.\n- [x] 1.1.2. B\n")
    assert rm.valid
    assert [(w.kind, w.ids, w.lines) for w in rm.warnings] == [
        ("unknown-dependency", ("1.1.1", "9.9.9"), (1,))
    ]
    assert "9.9.9" in rm.warnings[0].message and "line 1" in rm.warnings[0].message
    assert rm.missing(rm.tasks[0]) == ["9.9.9"]


def test_dependency_on_parent_waits_for_addenda() -> None:
    text = "- [x] 1.1.1. P\n  - [ ] 1.1.1.1. Add\n- [ ] 1.1.2. Q. Requires 1.1.1.\n"
    rm = parse_roadmap(text)
    assert rm.missing(_task(text, "1.1.2")) == ["1.1.1"]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parsing_never_crashes(text: str) -> None:
    rm = parse_roadmap(text)
    assert isinstance(rm.to_json(), dict)


# Roadmap-shaped noise: task lines, ids, clauses, indents, headings and line breaks.
ROADMAP_PIECES = st.lists(
    st.sampled_from(
        [
            "- [ ] ",
            "- [x] ",
            "1.2.3",
            "1.2",
            ". ",
            "Requires ",
            "steps 1.1-1.3",
            "phase 1",
            "\n",
            "\n  ",
            "\n    ",
            "\r\n",
            "## 1. H\n",
            "- Success: ",
            "  - [ ] 1.2.3.1 ",
            "\t",
            "x",
        ]
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(ROADMAP_PIECES)
def test_parsing_roadmap_shaped_noise_never_crashes(parts: list[str]) -> None:
    rm = parse_roadmap("".join(parts))
    for p in rm.errors + rm.warnings:
        assert p.ids and p.lines and p.message


_IDS = ["1.1.1", "1.1.2", "1.2", "1.1.1.1"]
_SENTENCES = st.sampled_from(
    ["Build it.", "Requires 1.1.1.", "See docs/x.md.", "Use v1.2.3 here.", "Keep `a.b` small", ""]
)
# Roadmap lines: tasks (ids repeat), wrapped title lines, bullets, headings, blank lines.
ROADMAP_LINES = st.lists(
    st.one_of(
        st.builds(
            "{}- [{}] {}. {}".format,
            st.sampled_from(["", "  ", "\t"]),
            st.sampled_from([" ", "x"]),
            st.sampled_from(_IDS),
            st.lists(_SENTENCES, max_size=4).map(" ".join),
        ),
        st.lists(_SENTENCES, min_size=1, max_size=3).map(lambda s: "  " + " ".join(s)),
        st.sampled_from(["  - Requires 1.1.1.", "  - Success: done.", "## 2. Next", "", "\r"]),
    ),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(ROADMAP_LINES, st.sampled_from([*_IDS, "9.9.9"]))
def test_one_tasks_headline_without_the_whole_parse_is_the_parsers(
    lines: list[str], task_id: str
) -> None:
    """`odw integrate` titles the squash commit from `task_headline`, not `parse_roadmap`."""
    text = "\n".join(lines)
    parsed = next((t.headline for t in parse_roadmap(text).tasks if t.id == task_id), None)
    assert task_headline(text, task_id) == parsed


@pytest.mark.parametrize(
    ("title", "headline"),
    [
        ("Add endpoints. Requires 2.6.1. See docs/x.md for 3.1.", "Add endpoints."),
        ("Third thing. Requires 1.1.2.", "Third thing."),
        ("Implement `weaver help` from metadata.", "Implement `weaver help` from metadata."),
        ("Use v1.2.3 of the API. Keep it small.", "Use v1.2.3 of the API. Keep it small."),
        ("Requires 1.1.1.", "Requires 1.1.1."),
    ],
    ids=["requires-and-see", "requires", "plain", "dots-inside", "only-requires"],
)
def test_headline_drops_requires_and_see_sentences(title: str, headline: str) -> None:
    task = parse_roadmap(f"- [ ] 1.1.1. {title}\n").tasks[0]
    assert task.headline == headline
