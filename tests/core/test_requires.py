"""Requires clauses as real roadmaps write them."""

import pytest

from app.core.requires import requires_of

CASES = [
    ("bullet", "Requires 1.2.3.", ["1.2.3"]),
    ("two ids", "Requires 1.2.3 and 2.1.1.", ["1.2.3", "2.1.1"]),
    ("inline then see", "Add endpoints. Requires 2.6.1. See 9.9.9 for more.", ["2.6.1"]),
    ("step range", "Requires steps 2.1-2.3.", ["2.1", "2.2", "2.3"]),
    ("step range en dash", "Requires steps 13.1–13.3.", ["13.1", "13.2", "13.3"]),
    ("cross-phase range keeps ends", "Requires steps 1.4-2.1.", ["1.4", "2.1"]),
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
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_requires_clause(text: str, expected: list[str]) -> None:
    assert requires_of([text]) == expected


def test_clauses_from_several_texts_are_merged_in_order() -> None:
    assert requires_of(["Title. Requires 1.1.", "Requires 1.1 and 2.2."]) == ["1.1", "2.2"]
