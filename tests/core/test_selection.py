"""Selection agrees with the rules: document order, met dependencies, taken and held."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.roadmap_parse import parse_roadmap
from app.core.selection import frontier

ROADMAP = """\
- [x] 1.1.1. Done
- [ ] 1.1.2. Ready. Requires 1.1.1.
- [ ] 1.1.3. Waits. Requires 1.1.2.
- [x] 1.2.1. Parent
  - [ ] 1.2.1.1. Addendum one
  - [x] 1.2.1.2. Addendum two
  - [ ] 1.2.1.3. Addendum three. Requires 1.1.3.
- [ ] 2.1.1. Phase two. Requires phase 1.
- [ ] 2.1.2. Unknown. Requires 7.7.7.
- [ ] 2.1.3. Free
"""


def test_frontier_fixture() -> None:
    f = frontier(parse_roadmap(ROADMAP))
    assert f.to_json() == {
        "ready": [
            {"id": "1.1.2", "kind": "normal", "branch": "roadmap-1-1-2", "subtasks": []},
            {
                "id": "1.2.1",
                "kind": "addendum",
                "branch": "roadmap-1-2-1-addendum",
                "subtasks": ["1.2.1.1"],
            },
            {"id": "2.1.3", "kind": "normal", "branch": "roadmap-2-1-3", "subtasks": []},
        ],
        "blocked": [
            {"id": "1.1.3", "missing": ["1.1.2"], "external": []},
            {"id": "1.2.1.3", "missing": ["1.1.3"], "external": []},
            {"id": "2.1.1", "missing": ["1"], "external": []},
            {"id": "2.1.2", "missing": ["7.7.7"], "external": []},
        ],
    }


def test_taken_and_held_are_not_ready_and_not_blocked() -> None:
    f = frontier(parse_roadmap(ROADMAP), taken=["1.1.2"], held=["1.2.1"])
    assert [c.id for c in f.ready] == ["2.1.3"]
    assert "1.1.2" not in [b.id for b in f.blocked]


def test_invalid_roadmap_schedules_nothing() -> None:
    f = frontier(parse_roadmap("- [ ] 1.1. A\n- [ ] 1.1. B\n- [ ] 1.2. C\n"))
    assert f.ready == () and f.blocked == ()


# --- properties against an independent reading of the rules -----------------


@st.composite
def roadmaps(draw):
    n_tasks = draw(st.integers(1, 14))
    ids = []
    for _ in range(n_tasks):
        tid = f"{draw(st.integers(1, 3))}.{draw(st.integers(1, 3))}.{draw(st.integers(1, 9))}"
        if tid not in ids:
            ids.append(tid)
    lines = []
    tasks = []
    for tid in ids:
        done = draw(st.booleans())
        deps = draw(
            st.lists(
                st.sampled_from([*ids, "1", "2", "1.1", "2.2", "9.9.9"]), max_size=3, unique=True
            )
        )
        tasks.append((tid, done, deps))
        lines.append(f"- [{'x' if done else ' '}] {tid}. Task {tid}")
        if deps:
            written = [d if "." in d else f"phase {d}" for d in deps]
            lines.append(f"  - Requires {', '.join(written)}.")
    taken = draw(st.lists(st.sampled_from(ids), max_size=3))
    held = draw(st.lists(st.sampled_from(ids), max_size=3))
    return "\n".join(lines) + "\n", tasks, set(taken), set(held)


def _met(tasks, dep: str, requester: str) -> bool:
    done = {t: d for t, d, _ in tasks}
    if dep in done:
        return done[dep]
    members = [t for t in done if t.startswith(dep + ".")]
    if not members:
        return False
    return all(done[t] for t in members if t != requester)


@settings(max_examples=400, deadline=None)
@given(roadmaps())
def test_selection_agrees_with_the_rules(case) -> None:
    text, tasks, taken, held = case
    rm = parse_roadmap(text)
    f = frontier(rm, taken=taken, held=held)
    # Ids are unique here, so the only possible errors are cycles, which block
    # just their own tasks and those behind them: the rules below still hold.
    assert rm.valid
    # A phase or step containing the task means its tasks before it in the document.
    order = [tid for tid, _, _ in tasks]

    def read(tid: str, deps: list[str]) -> list[str]:
        out: list[str] = []
        for d in deps:
            before = order[: order.index(tid)]
            own = tid.startswith(d + ".")
            out.extend(t for t in ([t for t in before if t.startswith(d + ".")] if own else [d])
                       if t not in out)  # fmt: skip
        return out

    tasks = [(tid, done, read(tid, deps)) for tid, done, deps in tasks]
    expected_ready = [
        tid
        for tid, done, deps in tasks
        if not done and tid not in taken | held and all(_met(tasks, d, tid) for d in deps)
    ]
    assert [c.id for c in f.ready] == expected_ready
    for c in f.ready:
        assert c.id not in taken and c.id not in held
    expected_blocked = {
        tid: [d for d in deps if not _met(tasks, d, tid)]
        for tid, done, deps in tasks
        if not done and any(not _met(tasks, d, tid) for d in deps)
    }
    assert {b.id: list(b.missing) for b in f.blocked} == expected_blocked
