"""The squash commit's subject: the task's whole headline, never cut mid-word or mid-code."""

from __future__ import annotations

import pytest

from app.core.naming import squash_subject
from app.core.roadmap_parse import parse_roadmap

LONG = (
    "- [ ] 2.6.3. Add the `odw roadmap --json` output for every task including the "
    "`external` field and `requires`\n  listing only local ids. Requires 2.6.1. See x.\n"
)

CASES = [
    ("long title with a code span past 100 characters", LONG,
     "Add the `odw roadmap --json` output for every task including the `external` field and "
     "`requires` listing only local ids. (2.6.3)"),
    ("short title", "- [ ] 1.1. Small. Requires 1.2.\n- [ ] 1.2. B\n", "Small. (1.1)"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "subject"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_squash_subject_keeps_the_whole_headline(text: str, subject: str) -> None:
    task = parse_roadmap(text).tasks[0]
    assert squash_subject(task.headline, task.id) == subject
    assert subject.count("`") % 2 == 0


def test_squash_subject_without_a_title_names_the_task() -> None:
    assert squash_subject("  ", "1.2") == "roadmap task 1.2 (1.2)"
