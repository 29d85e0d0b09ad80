"""Dependencies as real roadmaps write them: ticked work, own phases, other projects."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.core.roadmap_parse import _all_point_up, _edges, parse_roadmap
from app.core.selection import frontier


def _ids(problems) -> list[tuple[str, tuple[str, ...]]]:
    return [(p.kind, p.ids) for p in problems]


def test_a_cycle_through_a_ticked_task_is_not_an_error() -> None:
    rm = parse_roadmap("- [x] 1.1. A. Requires 1.2.\n- [ ] 1.2. B. Requires 1.1.\n")
    assert rm.errors == ()
    assert [c.id for c in frontier(rm).ready] == ["1.2"]


def test_dependencies_of_ticked_tasks_raise_no_warning() -> None:
    rm = parse_roadmap(
        "## 1. P\n- [x] 1.1. A. Requires 9.9, phase 1 and Podbot Step 4.5.\n- [ ] 1.2. B\n"
    )
    assert rm.warnings == () and rm.errors == ()


def test_a_cycle_blocks_only_the_tasks_on_and_behind_it() -> None:
    text = (
        "- [ ] 1.1. A. Requires 1.3.\n"
        "- [ ] 1.2. Free\n"
        "- [ ] 1.3. C. Requires 1.1.\n"
        "- [ ] 1.4. Behind. Requires 1.3.\n"
        "- [ ] 1.5. After free. Requires 1.2.\n"
    )
    rm = parse_roadmap(text)
    assert _ids(rm.errors) == [("cycle", ("1.1", "1.3"))]
    assert "the tasks waiting for them (1.4)" in rm.errors[0].message
    assert rm.valid  # the rest is schedulable
    f = frontier(rm)
    assert [c.id for c in f.ready] == ["1.2"]
    assert [(b.id, b.missing) for b in f.blocked] == [
        ("1.1", ("1.3",)),
        ("1.3", ("1.1",)),
        ("1.4", ("1.3",)),
        ("1.5", ("1.2",)),
    ]


def test_cycle_edges_name_the_clause_and_the_prefix_behind_them() -> None:
    text = "- [ ] 1.1.1. A. Requires phase 2.\n- [ ] 2.1.1. B. Requires step 1.1.\n"
    (cycle,) = parse_roadmap(text).errors
    assert cycle.ids == ("1.1.1", "2.1.1")
    assert "1.1.1 -> 2.1.1 (through 2) from 'Requires phase 2' on line 1" in cycle.message
    assert "2.1.1 -> 1.1.1 (through 1.1) from 'Requires step 1.1' on line 2" in cycle.message


def test_own_phase_is_a_self_reference_warning_not_a_dependency() -> None:
    text = (
        "## 1. Phase\n"
        "- [ ] 1.1.1 Ratify. Requires the phase 1 hosting schema dependency.\n"
        "- [ ] 1.1.2 Next. Requires 1.1.1.\n"
    )
    rm = parse_roadmap(text)
    assert rm.errors == ()
    assert _ids(rm.warnings) == [("self-reference", ("1.1.1", "1"))]
    assert rm.tasks[0].requires == ()
    assert [c.id for c in frontier(rm).ready] == ["1.1.1"]


EXTERNAL = (
    "- [x] 5.2.3. Local namesake\n"
    "- [x] 4.5. Local step namesake\n"
    "- [ ] 13.1.1. Boundary\n"
    "- [ ] 13.1.2. Adapter.\n"
    "  - Requires 13.1.1 and depends on OrthoConfig 5.2.3, 6.1, and 7.2.7.\n"
    '- [ ] 1.1.2 Seam. Requires Podbot Step 4.5, "Normalized launch contract".\n'
    "- [ ] 1.1.3 Issue. Requires leynos/podbot#12 and acme/tools 2.1.\n"
)

EXTERNAL_CASES = [
    (
        "project name over a list",
        "13.1.2",
        ("OrthoConfig 5.2.3", "OrthoConfig 6.1", "OrthoConfig 7.2.7"),
        ("13.1.1",),
    ),
    ("project step with a quoted name", "1.1.2", ("Podbot Step 4.5",), ()),
    ("owner/repo#N and owner/repo ids", "1.1.3", ("leynos/podbot#12", "acme/tools 2.1"), ()),
]


@pytest.mark.parametrize(
    ("tid", "external", "requires"),
    [c[1:] for c in EXTERNAL_CASES],
    ids=[c[0] for c in EXTERNAL_CASES],
)
def test_external_references_are_never_local_ids(tid, external, requires) -> None:
    rm = parse_roadmap(EXTERNAL)
    task = rm.get(tid)
    assert task is not None
    assert (task.external, task.requires) == (external, requires)
    assert [p.message.split("'")[1] for p in rm.warnings if p.ids == (tid,)] == list(external)
    assert all(p.kind == "external-dependency" for p in rm.warnings if p.ids == (tid,))


def test_external_references_block_until_declared_met() -> None:
    rm = parse_roadmap(EXTERNAL)
    blocked = {b.id: b for b in frontier(rm).blocked}
    assert blocked["1.1.2"].external == ("Podbot Step 4.5",)
    assert blocked["1.1.2"].missing == ()
    assert "1.1.2" not in [c.id for c in frontier(rm).ready]

    met = parse_roadmap(EXTERNAL, external_met=["podbot  step 4.5", "OrthoConfig 6.1"])
    assert "1.1.2" in [c.id for c in frontier(met).ready]
    assert met.missing(met.get("13.1.2")) == ["13.1.1", "OrthoConfig 5.2.3", "OrthoConfig 7.2.7"]
    assert "declared met" in next(p.message for p in met.warnings if "Podbot Step 4.5" in p.message)


# Per corpus roadmap: open tasks ready, blocked, and blocked by another project's work.
CORPUS_COUNTS = [
    ("corbusier", 13, 45, 12),
    ("cuprum", 11, 11, 0),
    ("df12-build", 5, 10, 0),
    ("episodic", 64, 23, 0),
    ("netsuke", 40, 6, 0),
    # 12.1.2-12.1.5 wait for the OrthoConfig work their `Depends on` bullets name
    ("weaver", 0, 121, 19),
    ("wireframe", 19, 32, 0),
]


@pytest.mark.parametrize(
    ("name", "ready", "blocked", "external"), CORPUS_COUNTS, ids=[c[0] for c in CORPUS_COUNTS]
)
def test_corpus_roadmaps_read_without_errors(
    corpus: Path, name: str, ready: int, blocked: int, external: int
) -> None:
    rm = parse_roadmap((corpus / f"{name}.md").read_text("utf-8"))
    assert [p.message for p in rm.errors] == []
    f = frontier(rm)
    assert (len(f.ready), len(f.blocked), sum(1 for b in f.blocked if b.external)) == (
        ready,
        blocked,
        external,
    )


def test_corbusier_task_2_3_3_is_ready_and_podbot_never_resolves_locally(corpus: Path) -> None:
    rm = parse_roadmap((corpus / "corbusier.md").read_text("utf-8"))
    assert "2.3.3" in [c.id for c in frontier(rm).ready]
    seam = rm.get("1.1.2")
    assert seam is not None
    assert seam.requires == ("2.5.1",)
    assert seam.external == ("Podbot Step 4.5", "Podbot Step 4.6")
    assert seam.external_unmet == seam.external


_DEPENDENCY_IDS = ["phase 1", "1.1", "1.2", "phase 2", "2.1", "1.1.1", "1.1.2", "1.2.1", "2.1.1"]
_TASK_LINES = st.builds(
    "{}- [{}] {}. Task. Requires {}.".format,
    st.sampled_from(["", "  "]),
    st.sampled_from([" ", "x"]),
    st.sampled_from(["1.1.1", "1.1.2", "1.2.1", "2.1.1", "2.1.2", "1.1.1.1", "2.1.1.1"]),
    st.lists(st.sampled_from(_DEPENDENCY_IDS), min_size=1, max_size=3).map(" and ".join),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_TASK_LINES, max_size=10))
@example(  # a step whose open tasks come before and after the task waiting for it
    ["- [ ] 1.1.1. A.", "- [ ] 2.1.1. B. Requires 1.1.", "- [ ] 1.1.2. C."]
)
def test_the_cycle_search_is_skipped_exactly_when_every_edge_points_up(lines: list[str]) -> None:
    """`_all_point_up` answers without making the edges; it must agree with them."""
    roadmap = parse_roadmap("\n".join(lines) + "\n")
    order = {t.id: i for i, t in reversed(list(enumerate(roadmap.tasks)))}
    edges = _edges(roadmap)
    upward = all(order[b] < order[a] for a, targets in edges.items() for b in targets)
    if len(roadmap.by_id) == len(roadmap.tasks):
        assert _all_point_up(roadmap) == upward
    else:
        assert not _all_point_up(roadmap)  # duplicates: the edges decide
    if not upward:
        return
    assert not [p for p in roadmap.errors if p.kind == "cycle"]


@settings(max_examples=300, deadline=None)
@given(st.lists(_TASK_LINES, max_size=10))
def test_what_a_task_waits_for_is_every_dependency_not_met(lines: list[str]) -> None:
    """`missing_local` answers most dependencies itself; `dependency_met` is the rule."""
    roadmap = parse_roadmap("\n".join(lines) + "\n")
    for t in roadmap.tasks:
        expected = [d for d in t.requires if not roadmap.dependency_met(d, requester=t.id)]
        assert roadmap.missing_local(t) == expected
