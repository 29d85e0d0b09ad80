"""`tick` flips one checkbox and leaves every other byte alone."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.roadmap_edit import TickError, tick
from app.core.roadmap_parse import parse_roadmap

TEXT = "# R\r\n\r\n- [ ] 1.1.1. A\r\n  - Requires 1.1.2.\n- [x] 1.1.2. B\r- [ ] 1.1.3 C\n"


def test_tick_flips_exactly_one_character() -> None:
    out = tick(TEXT, "1.1.1")
    assert out == TEXT.replace("- [ ] 1.1.1.", "- [x] 1.1.1.")
    assert out.count("\r\n") == TEXT.count("\r\n")


def test_tick_after_lone_cr_line_ending() -> None:
    assert tick(TEXT, "1.1.3").endswith("- [x] 1.1.3 C\n")


@pytest.mark.parametrize(
    ("tid", "message"),
    [("1.1.2", "already ticked"), ("9.9.9", "not in the roadmap")],
    ids=["done", "unknown"],
)
def test_tick_errors(tid: str, message: str) -> None:
    with pytest.raises(TickError, match=message):
        tick(TEXT, tid)


def test_tick_refuses_duplicate() -> None:
    with pytest.raises(TickError, match="appears 2 times"):
        tick("- [ ] 1.1. A\n- [ ] 1.1. B\n", "1.1")


_line = st.one_of(
    st.builds(
        lambda m, a, b, t: f"- [{m}] {a}.{b}. {t}",
        st.sampled_from(" xX"),
        st.integers(1, 5),
        st.integers(1, 5),
        st.text(alphabet="ab c", max_size=10),
    ),
    st.text(alphabet="ab -#[]x.\t", max_size=20),
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_line, st.sampled_from(["\n", "\r\n", "\r"])), min_size=1, max_size=20),
    st.data(),
)
def test_tick_changes_one_line_and_one_character(lines, data) -> None:
    text = "".join(a + b for a, b in lines)
    rm = parse_roadmap(text)
    counts: dict[str, int] = {}
    for t in rm.tasks:
        counts[t.id] = counts.get(t.id, 0) + 1
    open_ids = [t.id for t in rm.tasks if not t.done and counts[t.id] == 1]
    if not open_ids:
        return
    tid = data.draw(st.sampled_from(open_ids))
    out = tick(text, tid)
    assert len(out) == len(text)
    diffs = [i for i, (a, b) in enumerate(zip(text, out, strict=True)) if a != b]
    assert len(diffs) == 1 and out[diffs[0]] == "x" and text[diffs[0]] == " "
    after = {t.id: t.done for t in parse_roadmap(out).tasks}
    before = {t.id: t.done for t in rm.tasks}
    assert after == {**before, tid: True}
