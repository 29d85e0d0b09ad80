"""Dependencies in the forms authors write them (issue 31): each read, or said to be unread."""

from __future__ import annotations

import pytest

from app.core.roadmap import Roadmap, Task
from app.core.roadmap_parse import parse_roadmap
from app.core.selection import frontier


def _task(rm: Roadmap, tid: str) -> Task:
    task = rm.get(tid)
    assert task is not None, f"{tid} not read as a task"
    return task


def _ready(rm: Roadmap) -> list[str]:
    return [c.id for c in frontier(rm).ready]


def _kinds(rm: Roadmap) -> list[str]:
    return [p.kind for p in rm.warnings]


PHASES = "".join(f"## {n}. Phase {n}\n\n- [ ] {n}.1.1. Work of phase {n}\n\n" for n in range(1, 6))


@pytest.mark.parametrize(
    "clause",
    ["Requires phases 2-4.", "Requires phases 2\u20134.", "Requires phases 2 to 4.",
     "Requires phases 2 through 4."],
    ids=["hyphen", "en dash", "to", "through"],
)  # fmt: skip
def test_a_phase_range_names_every_phase_in_it(clause: str) -> None:
    rm = parse_roadmap(PHASES + f"## 6. Last\n\n- [ ] 6.1.1. Ship. {clause}\n")
    assert _task(rm, "6.1.1").requires == ("2", "3", "4")
    assert rm.missing(_task(rm, "6.1.1")) == ["2", "3", "4"]  # phases 1 and 5 do not hold it


STEPS = "".join(
    f"- [{'x' if step == 1 else ' '}] 7.{step}.{k}. Task 7.{step}.{k}\n"
    for step in (1, 2, 3)
    for k in (1, 2)
) + "".join(f"- [ ] 11.{s}.1. Task 11.{s}.1\n" for s in range(1, 7))


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        ("Requires 7.1.1-7.3.1.", ("7.1.1", "7.3.1", "7.1.2", "7.2.1", "7.2.2")),
        (
            "Requires 11.1.1 through 11.5.1.",
            ("11.1.1", "11.5.1", "11.2.1", "11.3.1", "11.4.1"),
        ),
    ],
    ids=["hyphen", "through"],
)
def test_an_id_range_across_steps_names_every_task_between_its_ends(
    clause: str, expected: tuple[str, ...]
) -> None:
    rm = parse_roadmap(STEPS + f"- [ ] 12.1.1. Later. {clause}\n")
    assert _task(rm, "12.1.1").requires == expected  # not 7.3.2 nor 11.6.1: past the end
    assert "12.1.1" not in _ready(rm)


@pytest.mark.parametrize(
    "bullets",
    [
        "  - Wire the probe into the scheduler so restarts do not race. Requires 2.2.3.\n",
        "  - Wire the probe into the scheduler so restarts do not race.\n"
        "    Requires 2.2.3, 2.3.3 and 3.1.2.\n",
        "  - [ ] Check the probe. Requires 2.2.3.\n",
    ],
    ids=["later in a bullet", "continuation line", "checklist item"],
)
def test_requires_anywhere_in_a_task_bullets_is_read(bullets: str) -> None:
    text = "- [ ] 2.2.3. Probe\n- [ ] 2.3.3. Cache\n- [ ] 3.1.2. Store\n- [ ] 4.1.1. Wire\n"
    rm = parse_roadmap(text + bullets)
    task = _task(rm, "4.1.1")
    assert task.requires[0] == "2.2.3"
    assert "4.1.1" not in _ready(rm)


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("  - Depends on: 1.2.3, 2.2.1.\n", ("1.2.3", "2.2.1")),
        ("  - Depends on 1.2.3.\n", ("1.2.3",)),
        ("  - Add the cache layer. Dependencies: 2.2.1.\n", ("2.2.1",)),
        ("  - Dependencies: Task 1.2.3, Task 2.2.1.\n", ("1.2.3", "2.2.1")),
        ("  - Dependencies 2.2.1\n", ("2.2.1",)),
    ],
    ids=["depends on with colon", "depends on", "dependencies sentence", "task prefix",
         "no colon"],
)  # fmt: skip
def test_depends_on_and_dependencies_mean_requires(written: str, expected: tuple[str, ...]) -> None:
    rm = parse_roadmap("- [ ] 1.2.3. A\n- [ ] 2.2.1. B\n- [ ] 3.1.1. C\n" + written)
    assert _task(rm, "3.1.1").requires == expected
    assert rm.warnings == ()
    assert _ready(rm) == ["1.2.3", "2.2.1"]


def test_dependency_forms_in_ticked_tasks_are_not_read() -> None:
    rm = parse_roadmap("- [ ] 1.1.1. A\n- [x] 1.1.2. B\n  - Depends on 1.1.1.\n")
    assert _task(rm, "1.1.2").requires == ()


STEP_OPENING = """\
## 6. Phase

### 6.1. First

- [ ] 6.1.1. A

### 6.2. Second

- [x] 6.2.1. B

### 6.3. Third

This step hardens what the first two built. Requires 6.1 and 6.2.

- [ ] 6.3.1. C
- [ ] 6.3.2. D

### 6.4. Fourth

- [ ] 6.4.1. E
"""


def test_a_step_opening_dependency_applies_to_each_task_of_the_step() -> None:
    rm = parse_roadmap(STEP_OPENING)
    assert _task(rm, "6.3.1").requires == ("6.1", "6.2")
    assert _task(rm, "6.3.2").requires == ("6.1", "6.2")
    assert _task(rm, "6.4.1").requires == ()  # the next step is not under it
    assert _ready(rm) == ["6.1.1", "6.4.1"]


PHASE_OPENING = """\
## 2. Base

### 2.3. X

- [ ] 2.3.1. A

### 2.4. Y

- [ ] 2.4.1. B

## 3. Built on the base

Dependencies: depends on 2.3 and 2.4.

### 3.1. Z

- [ ] 3.1.1. C

## 4. Free

- [ ] 4.1.1. D
"""


def test_a_phase_opening_dependency_applies_to_each_task_of_the_phase() -> None:
    rm = parse_roadmap(PHASE_OPENING)
    assert _task(rm, "3.1.1").requires == ("2.3", "2.4")
    assert _task(rm, "4.1.1").requires == ()
    assert _ready(rm) == ["2.3.1", "2.4.1", "4.1.1"]


def test_an_id_may_end_in_a_letter_and_sorts_between_its_neighbours() -> None:
    text = (
        "- [x] 2.1.1. A\n- [ ] 2.1.1a. A again\n- [ ] 2.1.1b. A once more\n"
        "  - Dependencies: 2.1.1a\n- [ ] 2.1.2. B\n"
        "- [ ] 3.1.1. C. Requires 2.1.1a-2.1.2.\n"
    )
    rm = parse_roadmap(text)
    assert [t.id for t in rm.tasks] == ["2.1.1", "2.1.1a", "2.1.1b", "2.1.2", "3.1.1"]
    assert _task(rm, "2.1.1b").requires == ("2.1.1a",)
    assert _task(rm, "3.1.1").requires == ("2.1.1a", "2.1.2", "2.1.1b")
    assert _ready(rm) == ["2.1.1a", "2.1.2"]


def test_the_task_colon_dialect_reads_like_the_gist_form() -> None:
    text = "- [x] Task 1.1.1: Set up\n- [ ] Task 1.1.2: Build\n  - Dependencies: Task 1.1.1.\n"
    text += "- [ ] Task 1.1.3: Ship\n  - Dependencies: Task 1.1.2.\n"
    rm = parse_roadmap(text)
    assert [(t.id, t.title, t.requires) for t in rm.tasks] == [
        ("1.1.1", "Set up", ()),
        ("1.1.2", "Build", ("1.1.1",)),
        ("1.1.3", "Ship", ("1.1.2",)),
    ]
    assert _ready(rm) == ["1.1.2"]


def test_checklist_items_without_a_readable_task_are_an_error_naming_the_first() -> None:
    rm = parse_roadmap("# Plan\n\nSome text.\n\n- [ ] Task one: do it\n- [ ] Task two\n")
    assert [(p.kind, p.lines) for p in rm.errors] == [("no-readable-task", (5,))]
    assert "'- [ ] Task one: do it'" in rm.errors[0].message
    assert parse_roadmap("# Notes\n\n- a bullet\n").errors == ()  # no checklist: no tasks


SELF = """\
### 13.1. A
- [ ] 13.1.1. A1
### 13.3. C
- [ ] 13.3.1. C1
- [x] 13.3.2. C2
- [ ] 13.3.3. C3
- [ ] 13.3.4. C4
  - Requires steps 13.1-13.3.
- [ ] 13.3.5. C5
"""


def test_a_reference_to_the_own_step_means_its_tasks_before_the_task() -> None:
    rm = parse_roadmap(SELF)
    task = _task(rm, "13.3.4")
    assert task.requires == ("13.1", "13.2", "13.3.1", "13.3.2", "13.3.3")  # not 13.3.5
    (warning,) = [p for p in rm.warnings if p.kind == "self-reference"]
    assert warning.ids == ("13.3.4", "13.3")
    assert "read as the tasks of 13.3 before it: 13.3.1, 13.3.2, 13.3.3" in warning.message
    assert "13.3.4" not in _ready(rm)  # 13.3.1 is open: it may not start beside it


def test_an_alternative_is_read_as_both_with_a_warning_naming_the_clause() -> None:
    rm = parse_roadmap("- [x] 4.2.1. A\n- [ ] 4.2.2. B\n- [ ] 4.3.1. C. Requires 4.2.1 or 4.2.2.\n")
    assert _task(rm, "4.3.1").requires == ("4.2.1", "4.2.2")
    (warning,) = rm.warnings
    assert (warning.kind, warning.ids, warning.lines) == (
        "alternative-dependency",
        ("4.3.1", "4.2.1", "4.2.2"),
        (3,),
    )
    assert "'Requires 4.2.1 or 4.2.2'" in warning.message
    assert _ready(rm) == ["4.2.2"]


UNREAD = """\
- [ ] 3.1.1. Base
- [ ] 3.2.1. Cache
  - Depends on the storage task landing first.
- [ ] 3.2.2. Index
  - This builds on 3.1.1 and its fixtures.
- [ ] 3.2.3. Query
  - Blocked by 9.9.9 upstream tasks.
- [ ] 3.2.4. Quoted
  - Depends on archived task `2.2.3`.
- [ ] 3.2.5. Prose without a dependency
  - Run the sweep after validation; the policy requires them.
"""


def test_what_cannot_be_read_is_said_with_its_line_and_prose_is_read_and_said() -> None:
    rm = parse_roadmap(UNREAD)
    found = [(p.kind, p.ids, p.lines) for p in rm.warnings]
    assert found == [
        ("unread-dependency", ("3.2.1",), (3,)),
        ("prose-dependency", ("3.2.2", "3.1.1"), (5,)),
        ("unread-dependency", ("3.2.3", "9.9.9"), (7,)),
        ("unread-dependency", ("3.2.4", "2.2.3"), (9,)),
    ]
    assert "'Depends on the storage task landing first'" in rm.warnings[0].message
    assert "'builds on 3.1.1 and its fixtures'" in rm.warnings[1].message
    assert _task(rm, "3.2.2").requires == ("3.1.1",)
    assert _task(rm, "3.2.3").requires == ()  # unknown in prose: said, not held
    assert _ready(rm) == ["3.1.1", "3.2.1", "3.2.3", "3.2.4", "3.2.5"]


@pytest.mark.parametrize(
    "hidden",
    [
        "  - Write `Requires 1.1.1.` in the template.\n",
        "  - Example:\n\n    ```\n    Requires 1.1.1.\n    ```\n",
    ],
    ids=["code span", "fenced block"],
)
def test_quoted_text_is_never_read(hidden: str) -> None:
    rm = parse_roadmap("- [ ] 1.1.1. A\n- [ ] 1.1.2. B\n" + hidden)
    assert _task(rm, "1.1.2").requires == ()
    assert _ready(rm) == ["1.1.1", "1.1.2"]


def test_a_step_opening_that_names_nothing_readable_is_said_once() -> None:
    text = "### 1.2. Step\n\nDepends on the design review.\n\n- [ ] 1.2.1. A\n- [ ] 1.2.2. B\n"
    rm = parse_roadmap(text)
    assert [(p.kind, p.lines) for p in rm.warnings] == [("unread-dependency", (3,))]
    assert "paragraph opening that section" in rm.warnings[0].message


@pytest.mark.parametrize(
    "prose",
    ["Start it after 3.1.1 lands.", "It is blocked by 3.1.1 for now.", "It requires 3.1.1 too."],
    ids=["after", "blocked by", "requires"],
)
def test_prose_naming_a_task_holds_the_task_and_says_so(prose: str) -> None:
    rm = parse_roadmap(f"- [ ] 3.1.1. Base\n- [ ] 3.2.1. Next\n  - {prose}\n")
    assert _task(rm, "3.2.1").requires == ("3.1.1",)
    assert [(p.kind, p.lines) for p in rm.warnings] == [("prose-dependency", (3,))]
    assert _ready(rm) == ["3.1.1"]


def test_a_clause_that_says_there_is_nothing_to_wait_for_is_not_a_warning() -> None:
    rm = parse_roadmap("- [ ] 3.1.1. Base\n  - Dependencies: none.\n  - Depends on: n/a\n")
    assert rm.warnings == ()
