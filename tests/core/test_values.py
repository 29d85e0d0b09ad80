"""`Value`, the record of a roadmap read: immutable, compared by its public fields."""

from __future__ import annotations

import copy
import pickle

import pytest

from app.core.roadmap import Problem, Roadmap, Task
from app.core.roadmap_parse import parse_roadmap
from app.core.selection import Blocked, Candidate, frontier


def _task(**changes: object) -> Task:
    return Task("1.1", "Title", False, ("1.0",), 3).replace(**changes)


def test_fields_defaults_and_order() -> None:
    t = Task("1.1", "Title", False, ("1.0",), 3)
    assert (t.success, t.context, t.addendum_of, t.external, t.sources) == (None, (), None, (), ())
    assert repr(t).startswith("Task(id='1.1', title='Title', done=False, requires=('1.0',)")


def test_equal_and_hashed_by_fields_and_type() -> None:
    assert _task() == _task() and hash(_task()) == hash(_task())
    assert _task() != _task(done=True)
    assert len({_task(), _task(), _task(line=4)}) == 2
    assert Blocked("1.1", (), 3) != Candidate("1.1", "normal", "roadmap-1-1", (), 3)
    assert Problem("cycle", ("1",), (1,), "m") != ("cycle", ("1",), (1,), "m")


def test_immutable_and_replace_makes_a_copy() -> None:
    t = _task()
    with pytest.raises(AttributeError, match="immutable"):
        t.done = True  # type: ignore[misc]
    with pytest.raises(AttributeError, match="immutable"):
        del t.title  # type: ignore[misc]
    done = t.replace(done=True)
    assert (t.done, done.done, done.title) == (False, True, "Title")


def test_a_roadmap_compares_by_its_tasks_and_problems_not_its_indexes() -> None:
    text = "- [x] 1.1. A.\n- [ ] 1.2. B. Requires 1.1.\n- [ ] 1.3. C. Requires 9.9.\n"
    a, b = parse_roadmap(text), parse_roadmap(text)
    assert a == b and "_by_id" not in repr(a)
    assert a != parse_roadmap(text.replace("[ ] 1.2", "[x] 1.2"))
    assert Roadmap(a.tasks) != a  # the same tasks without their warnings


def test_copies_and_pickles_keep_the_fields_and_the_indexes() -> None:
    text = "- [x] 1.1. A.\n  - [ ] 1.1.1. Addendum.\n- [ ] 1.2. B. Requires 1.1.\n"
    r = parse_roadmap(text)
    for other in (copy.deepcopy(r), pickle.loads(pickle.dumps(r))):  # noqa: S301 (our own bytes)
        assert other == r
        assert frontier(other) == frontier(r)
        assert [a.id for a in other.addenda("1.1")] == ["1.1.1"]


def test_a_replaced_roadmap_is_indexed_for_its_new_tasks() -> None:
    r = parse_roadmap("- [ ] 1.1. A.\n- [ ] 1.2. B. Requires 1.1.\n")
    done = r.replace(tasks=tuple(t.replace(done=True) if t.id == "1.1" else t for t in r.tasks))
    assert done.get("1.1") is not None and done.get("1.1").done  # type: ignore[union-attr]
    assert [c.id for c in frontier(done).ready] == ["1.2"]
    assert [c.id for c in frontier(r).ready] == ["1.1"]
