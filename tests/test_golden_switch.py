"""The golden-file switch cannot rewrite expectations in CI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.golden import assert_matches_golden


def test_the_update_switch_fails_under_ci_and_leaves_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    golden = tmp_path / "x.out"
    golden.write_text("expected\n")
    monkeypatch.setenv("ODW_UPDATE_GOLDEN", "1")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="never rewritten in CI"):
        assert_matches_golden(golden, "whatever the code printed\n")
    assert golden.read_text() == "expected\n"


def test_the_update_switch_rewrites_outside_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    golden = tmp_path / "x.out"
    golden.write_text("old\n")
    monkeypatch.setenv("ODW_UPDATE_GOLDEN", "1")
    monkeypatch.delenv("CI", raising=False)
    assert_matches_golden(golden, "new\n")
    assert golden.read_text() == "new\n"


def test_without_the_switch_a_difference_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    golden = tmp_path / "x.out"
    golden.write_text("expected\n")
    monkeypatch.delenv("ODW_UPDATE_GOLDEN", raising=False)
    with pytest.raises(AssertionError):
        assert_matches_golden(golden, "other\n")
    assert golden.read_text() == "expected\n"
