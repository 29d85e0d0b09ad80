"""Salvage path safety on hand-made trees: nothing but regular ExecPlans is copied."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from actions.salvage import candidates, collect


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    wt = tmp_path / "wt"
    plans = wt / "docs" / "execplans"
    plans.mkdir(parents=True)
    (plans / "1-2-3.md").write_text("plan\n")
    (plans / "nested").mkdir()
    (plans / "nested" / "deep.md").write_text("deep\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("secret\n")
    os.symlink(outside, plans / "linked")  # a symlinked folder holding a .md
    os.symlink(outside / "secret.md", plans / "s.md")
    os.mkfifo(plans / "pipe.md")
    (wt / "docs" / "other.md").write_text("x\n")
    return wt


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/etc/passwd", "absolute path"),
        ("docs/execplans/../../etc/x.md", "path has a '..' component"),
        ("docs/execplans/../other.md", "path has a '..' component"),
        ("docs/other.md", "outside docs/execplans/"),
        ("docs/execplans/s.md", "symlink"),
        ("docs/execplans/linked/secret.md", "in a nested folder (only docs/execplans/*.md)"),
        ("docs/execplans/pipe.md", "not a regular file"),
        ("docs/execplans/gone.md", "missing"),
        ("", "empty or invalid path"),
    ],
    ids=[
        "absolute",
        "dotdot-out",
        "dotdot-sideways",
        "outside",
        "symlink",
        "symlinked-dir",
        "fifo",
        "missing",
        "empty",
    ],
)
def test_rejections_are_named(tree: Path, tmp_path: Path, path: str, reason: str) -> None:
    bundle = collect(tree, [path, "docs/execplans/1-2-3.md"], tmp_path / "bundle")
    assert bundle.files == ["docs/execplans/1-2-3.md"]
    assert [(r.path, r.reason) for r in bundle.rejected] == [(path, reason)]
    copied = sorted(p for p in (tmp_path / "bundle").rglob("*") if p.is_file())
    assert copied == [tmp_path / "bundle" / "docs" / "execplans" / "1-2-3.md"]


def test_nested_folders_are_rejected_by_name(tree: Path, tmp_path: Path) -> None:
    """The contract is `docs/execplans/*.md`: only files directly in the folder."""
    bundle = collect(tree, ["docs/execplans/nested/deep.md"], tmp_path / "b")
    assert bundle.files == []
    assert [(r.path, r.reason) for r in bundle.rejected] == [
        ("docs/execplans/nested/deep.md", "in a nested folder (only docs/execplans/*.md)")
    ]
    assert not (tmp_path / "b").exists()


def test_a_hard_link_is_rejected_by_name(tree: Path, tmp_path: Path) -> None:
    """A second name for a file elsewhere (`/etc/hostname`, say) is not an ExecPlan."""
    os.link(tmp_path / "outside" / "secret.md", tree / "docs" / "execplans" / "h.md")
    bundle = collect(tree, ["docs/execplans/h.md", "docs/execplans/1-2-3.md"], tmp_path / "b")
    assert bundle.files == ["docs/execplans/1-2-3.md"]
    assert [(r.path, r.reason) for r in bundle.rejected] == [
        ("docs/execplans/h.md", "has more than one hard link (2)")
    ]
    assert not (tmp_path / "b" / "docs" / "execplans" / "h.md").exists()


def test_the_execplans_folder_itself_being_a_symlink_is_rejected(tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    (wt / "docs").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "p.md").write_text("p\n")
    os.symlink(elsewhere, wt / "docs" / "execplans")
    bundle = collect(wt, ["docs/execplans/p.md"], tmp_path / "b")
    assert bundle.files == []
    assert bundle.rejected[0].reason == "inside a symlinked folder (execplans)"


def test_candidates_skip_deletions_and_unrelated_paths() -> None:
    dirty = [
        ("docs/execplans/a.md", False),
        ("docs/execplans/b.md", True),
        ("src/x.py", False),
        ("docs/execplans/link", False),
    ]
    assert candidates(dirty) == ["docs/execplans/a.md", "docs/execplans/link"]
