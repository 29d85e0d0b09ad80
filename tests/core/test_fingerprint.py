"""Fingerprints: volatile details masked, real changes kept (seed 001)."""

import pytest

from app.core.budgets import fingerprint

SAME = [
    ("sha", "build failed at 3f2a9c1d", "build failed at 77aa00ff"),
    ("duration", "tests failed in 0.53s", "tests failed in 12.8s"),
    ("line position", "src/x.py:10:4: E501 too long", "src/x.py:12:9: E501 too long"),
    ("timestamp", "2026-11-30T10:00:01Z timeout", "2026-11-30T10:07:44Z timeout"),
    ("temp path", "cannot open /tmp/pytest-1/a.txt", "cannot open /tmp/pytest-9/a.txt"),
    ("case and space", "Build  FAILED", "build failed"),
]
DIFFERENT = [
    ("count moves", "3 tests failed", "1 test failed"),
    ("other message", "err 1", "err 2"),
    ("other test", "test_a failed", "test_b failed"),
]


@pytest.mark.parametrize(("a", "b"), [c[1:] for c in SAME], ids=[c[0] for c in SAME])
def test_volatile_details_do_not_change_the_fingerprint(a: str, b: str) -> None:
    assert fingerprint(a) == fingerprint(b)


@pytest.mark.parametrize(("a", "b"), [c[1:] for c in DIFFERENT], ids=[c[0] for c in DIFFERENT])
def test_real_changes_are_progress(a: str, b: str) -> None:
    assert fingerprint(a) != fingerprint(b)
