"""Requires clauses as real roadmaps write them."""

import pytest

from app.core.requires import Clause, clauses_of, external_of, requires_of

CASES = [
    ("bullet", "Requires 1.2.3.", ["1.2.3"]),
    ("two ids", "Requires 1.2.3 and 2.1.1.", ["1.2.3", "2.1.1"]),
    ("inline then see", "Add endpoints. Requires 2.6.1. See 9.9.9 for more.", ["2.6.1"]),
    ("step range", "Requires steps 2.1-2.3.", ["2.1", "2.2", "2.3"]),
    ("step range en dash", "Requires steps 13.1–13.3.", ["13.1", "13.2", "13.3"]),
    ("cross-phase range keeps ends", "Requires steps 1.4-2.1.", ["1.4", "2.1"]),
    ("cross-phase rising range keeps ends", "Requires steps 1.2–2.3.", ["1.2", "2.3"]),
    ("falling range keeps ends", "Requires steps 3.5-3.2.", ["3.5", "3.2"]),
    ("range of unlike depths keeps ends", "Requires 1.2-1.2.4.", ["1.2", "1.2.4"]),
    ("one-step range", "Requires 4.1.2-4.1.2.", ["4.1.2"]),
    ("range read by its last parts", "Requires 2.5.1-2.5.3.", ["2.5.1", "2.5.2", "2.5.3"]),
    ("range of high last parts", "Requires 2.1.4-2.1.6.", ["2.1.4", "2.1.5", "2.1.6"]),
    ("phase", "Requires phase 2.", ["2"]),
    ("step prefix", "Requires step 2.1.", ["2.1"]),
    ("phase list", "Requires phases 14, 15, and 17.", ["14", "15", "17"]),
    ("phase then ids", "Requires phase 5, 6.1.1, and 6.1.2.", ["5", "6.1.1", "6.1.2"]),
    ("backticked ids", "Requires archived tasks `1.2.2` and `1.3.2`. See x.", ["1.2.2", "1.3.2"]),
    ("parenthetical", "Requires 5.2.1 (non-linear) and 1.4.1. See y.", ["5.2.1", "1.4.1"]),
    ("wrapped clause", "Requires 1.2.3,\n  4.5.6. Later 7.7.7", ["1.2.3", "4.5.6"]),
    ("repeats dropped, order kept", "Requires 2.1.1, 1.1.1 and 2.1.1.", ["2.1.1", "1.1.1"]),
    ("no clause", "Implement the thing in 1.2.3 style.", []),
    ("lowercase requires is prose", "This requires 1.2.3 later.", []),
    ("versions are not ids", "Requires v1.2.3 and 2.2.2.", ["2.2.2"]),
    ("end of text", "Requires 3.1", ["3.1"]),
    (
        "through range",
        "Requires completion of 13.4.2 through 13.4.4.",
        ["13.4.2", "13.4.3", "13.4.4"],
    ),
    ("hyphen range of tasks", "Requires 14.1.1-14.1.3.", ["14.1.1", "14.1.2", "14.1.3"]),
    (
        "another project's step is not local",
        'Requires 2.5.1, Podbot Step 4.5, "Launch".',
        ["2.5.1"],
    ),
    (
        "grammar words are not project names",
        "Requires Phase 3 and Steps 1.1-1.2.",
        ["3", "1.1", "1.2"],
    ),
]

EXTERNAL_CASES = [
    (
        "name over a list",
        "Requires 13.1.1 and depends on OrthoConfig 5.2.3, 6.1, and 7.2.7.",
        ["OrthoConfig 5.2.3", "OrthoConfig 6.1", "OrthoConfig 7.2.7"],
    ),
    (
        "range kept whole",
        "Requires 1.1 and depends on OrthoConfig 7.2.3 through 7.2.5 and 8.1.",
        ["OrthoConfig 7.2.3 through 7.2.5", "OrthoConfig 8.1"],
    ),
    (
        "step keyword",
        'Requires Podbot Step 2.2, "Container", Podbot Step 2.3.',
        ["Podbot Step 2.2", "Podbot Step 2.3"],
    ),
    (
        "owner/repo#N and name#N",
        "Requires leynos/podbot#12 and weaver#7.",
        ["leynos/podbot#12", "weaver#7"],
    ),
    ("owner/repo ids", "Requires acme/tools 2.1.", ["acme/tools 2.1"]),
    (
        "a grammar word before a name",
        "Requires Phase 3 and depends on OrthoConfig 5.2.3.",
        ["OrthoConfig 5.2.3"],
    ),
    ("lowercase prose is not a name", "Requires the phase 1 schema and archived task 2.2.3.", []),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in EXTERNAL_CASES], ids=[c[0] for c in EXTERNAL_CASES]
)
def test_external_references(text: str, expected: list[str]) -> None:
    assert external_of([text]) == expected


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_requires_clause(text: str, expected: list[str]) -> None:
    assert requires_of([text]) == expected


def test_clauses_from_several_texts_are_merged_in_order() -> None:
    assert requires_of(["Title. Requires 1.1.", "Requires 1.1 and 2.2."]) == ["1.1", "2.2"]


@pytest.mark.parametrize(
    ("text", "clause"),
    [
        ("Requires 1.2.3.", Clause("Requires 1.2.3", ("1.2.3",), ())),
        ("Needs work. Requires 4.5.", Clause("Requires 4.5", ("4.5",), ())),
        (
            "Requires 1.1 and   OrthoConfig 2.2.",
            Clause("Requires 1.1 and OrthoConfig 2.2", ("1.1",), ("OrthoConfig 2.2",)),
        ),
    ],
    ids=["whole-text", "one-clause", "mixed"],
)
def test_a_clause_keeps_its_text_as_shown_to_people(text: str, clause: Clause) -> None:
    assert clauses_of([text]) == [clause]
