"""A stopped task's title: verdict, cause and command in about 100 characters,
each part cut on its own, the command never cut (`app/core/titles.py`)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.titles import TITLE_BUDGET, Cause, compose, cut_middle

VERDICT = "failed at gates (attempt 2 of 2)"


@pytest.mark.parametrize(
    ("what", "quote", "command"),
    [
        ("make test exit 2", "FAILED tests/test_budget.py::test_charge_repeats - assert 1 == 2",
         "/odw recover 1.1"),
        ("cargo test --workspace --all-features --locked -- --nocapture exit 101",
         "assertion `left == right` failed", "/odw rearm 1.2.3 gateRetryBudget.build=4"),
        ("npm test exit 1", "● sum › adds 1 + 2 to equal 3 " * 10, "/odw retry 12.4"),
    ],
    ids=["pytest-under-make", "long-cargo-command", "long-jest-line"],
)  # fmt: skip
def test_each_part_is_cut_alone_and_the_command_never(what: str, quote: str, command: str) -> None:
    title = compose(VERDICT, Cause(what, quote), command)
    assert len(title) <= TITLE_BUDGET, title
    assert title.startswith(f"{VERDICT}: ") and title.endswith(f"; {command}")
    said = title.removeprefix(f"{VERDICT}: ").removesuffix(f"; {command}")
    shown_what, _, shown_quote = said.partition(": ")
    # At most one cut per part: never a cut of a cut.
    assert shown_what.count("…") <= 1 and shown_quote.count("…") <= 1
    assert what.startswith(shown_what.rstrip("…")) or shown_what == what
    if shown_quote:
        head, _, tail = shown_quote.partition("…")
        assert " ".join(quote.split()).startswith(head) and " ".join(quote.split()).endswith(tail)


def test_a_short_cause_is_not_cut() -> None:
    title = compose(VERDICT, Cause("make test exit 2", "FAILED t.py::x"), "/odw recover 1.1")
    assert title == f"{VERDICT}: make test exit 2: FAILED t.py::x; /odw recover 1.1"


@given(st.text(min_size=0, max_size=300), st.integers(min_value=3, max_value=120))
def test_a_middle_cut_fits_and_keeps_both_ends(text: str, limit: int) -> None:
    out = cut_middle(text, limit)
    flat = " ".join(text.split())
    assert len(out) <= limit
    if len(flat) <= limit:
        assert out == flat
    else:
        head, _, tail = out.partition("…")
        assert flat.startswith(head) and flat.endswith(tail)
