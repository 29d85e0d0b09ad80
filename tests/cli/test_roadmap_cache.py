"""The roadmap cache of `odw roadmap` / `odw next`: a read from it equals a parse, and a
stale, foreign or broken entry is never used."""

from __future__ import annotations

import marshal
import os
from pathlib import Path

import pytest

from app.cli import roadmap_cache
from app.cli.roadmap_cache import read_roadmap
from app.core.roadmap_parse import parse_roadmap
from bench.support import generated_roadmap

ROADMAP = """\
## 1. Phase
- [x] 1.1. First task. Requires 9.9.
  - Success: it is done.
- [ ] 1.2. Second task, with a title
  that wraps. Requires 1.1 and Podbot Step 4.5.
- [ ] 1.3. Third task.
  - Requires 1.2.
  - [ ] 1.3.1. A nested task.
"""


def _entries(cache: Path) -> list[Path]:
    return sorted((cache / "roadmaps").glob("*.marshal"))


def _entry_fields(entry: Path) -> list:
    return list(marshal.loads(entry.read_bytes()))  # noqa: S302 (an entry this test wrote)


def test_a_repeat_read_comes_from_the_cache_and_equals_a_parse(tmp_path: Path) -> None:
    cache, path = tmp_path / "cache", str(tmp_path / "roadmap.md")
    first = read_roadmap(path, ROADMAP, cache)
    assert len(_entries(cache)) == 1
    again = read_roadmap(path, ROADMAP, cache)
    expected = parse_roadmap(ROADMAP)
    assert first == again == expected
    assert [t.__dict__ for t in again.tasks] == [t.__dict__ for t in expected.tasks]
    assert again.errors == expected.errors and again.warnings == expected.warnings
    # The indexes are rebuilt too: what selection asks of the roadmap agrees.
    for t in expected.tasks:
        assert again.missing(t) == expected.missing(t)


@pytest.mark.parametrize("size", [1, 5000], ids=["one task", "5,000 tasks"])
def test_generated_roadmaps_read_back_equal(tmp_path: Path, size: int) -> None:
    text = generated_roadmap(size)
    read_roadmap(str(tmp_path / "r.md"), text, tmp_path)
    assert read_roadmap(str(tmp_path / "r.md"), text, tmp_path) == parse_roadmap(text)


def test_every_corpus_roadmap_reads_back_equal(corpus: Path, tmp_path: Path) -> None:
    for path in sorted(corpus.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        read_roadmap(str(path), text, tmp_path)
        cached = read_roadmap(str(path), text, tmp_path)
        assert cached == parse_roadmap(text), path.name
    assert len(_entries(tmp_path)) == len(list(corpus.glob("*.md")))


def test_an_entry_is_used_only_for_its_own_text_and_parser(tmp_path: Path, monkeypatch) -> None:
    cache, path = tmp_path / "cache", str(tmp_path / "roadmap.md")
    read_roadmap(path, ROADMAP, cache)
    (entry,) = _entries(cache)
    data = _entry_fields(entry)
    data[4][0]["title"] = "Written into the entry"
    entry.write_bytes(marshal.dumps(tuple(data)))
    # The same text and parser: the entry is what is read.
    assert read_roadmap(path, ROADMAP, cache).tasks[0].title == "Written into the entry"
    # The file changed: parsed again, and the entry replaced.
    edited = ROADMAP.replace("- [ ] 1.3.", "- [x] 1.3.")
    assert read_roadmap(path, edited, cache) == parse_roadmap(edited)
    assert read_roadmap(path, ROADMAP, cache).tasks[0].title == "First task. Requires 9.9."
    # Another parser (another odw, or its code edited): the entry is not trusted.
    data = _entry_fields(entry)
    data[4][0]["title"] = "Written into the entry"
    entry.write_bytes(marshal.dumps(tuple(data)))
    monkeypatch.setattr(roadmap_cache, "__version__", "another")
    assert read_roadmap(path, ROADMAP, cache).tasks[0].title == "First task. Requires 9.9."


def test_another_path_with_the_same_name_has_its_own_entry(tmp_path: Path) -> None:
    a, b = tmp_path / "a" / "roadmap.md", tmp_path / "b" / "roadmap.md"
    other = ROADMAP.replace("Second task", "Other second task")
    read_roadmap(str(a), ROADMAP, tmp_path / "cache")
    read_roadmap(str(b), other, tmp_path / "cache")
    assert read_roadmap(str(a), ROADMAP, tmp_path / "cache") == parse_roadmap(ROADMAP)
    assert read_roadmap(str(b), other, tmp_path / "cache") == parse_roadmap(other)


@pytest.mark.parametrize(
    "content",
    [b"", b"\x00garbage", marshal.dumps((1, 2, 3)), marshal.dumps("text"), b"\xe9" * 100],
    ids=["empty", "garbage", "short tuple", "not a tuple", "bad bytes"],
)
def test_a_broken_entry_is_a_miss(tmp_path: Path, content: bytes) -> None:
    cache, path = tmp_path / "cache", str(tmp_path / "roadmap.md")
    read_roadmap(path, ROADMAP, cache)
    (entry,) = _entries(cache)
    entry.write_bytes(content)
    assert read_roadmap(path, ROADMAP, cache) == parse_roadmap(ROADMAP)
    assert read_roadmap(path, ROADMAP, cache) == parse_roadmap(ROADMAP)  # rewritten


def test_an_entry_with_the_wrong_fields_is_a_miss(tmp_path: Path) -> None:
    cache, path = tmp_path / "cache", str(tmp_path / "roadmap.md")
    read_roadmap(path, ROADMAP, cache)
    (entry,) = _entries(cache)
    data = _entry_fields(entry)
    data[4] = [1, 2, 3]  # not field dictionaries
    entry.write_bytes(marshal.dumps(tuple(data)))
    assert read_roadmap(path, ROADMAP, cache) == parse_roadmap(ROADMAP)


def test_a_cache_that_cannot_be_written_only_costs_the_parse(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the cache directory would go")
    path = str(tmp_path / "roadmap.md")
    assert read_roadmap(path, ROADMAP, blocker) == parse_roadmap(ROADMAP)
    assert blocker.read_text().startswith("a file")
    assert [p.name for p in tmp_path.iterdir()] == ["not-a-directory"]


def test_the_cli_reads_through_the_cache_and_sees_every_edit(tmp_path: Path, run_odw) -> None:
    roadmap = tmp_path / "roadmap.md"
    roadmap.write_text(ROADMAP)
    cache = tmp_path / "cache"
    env = {**os.environ, "ODW_CACHE_DIR": str(cache)}
    first = run_odw("next", str(roadmap), "--json", env=env)
    again = run_odw("next", str(roadmap), "--json", env=env)
    assert first.returncode == again.returncode == 0, first.stderr
    assert first.stdout == again.stdout and '"id": "1.2"' in first.stdout
    assert len(_entries(cache)) == 1
    roadmap.write_text(ROADMAP.replace("- [ ] 1.2.", "- [x] 1.2."))
    edited = run_odw("next", str(roadmap), "--json", env=env)
    uncached = run_odw("next", str(roadmap), "--json", env={**env, "ODW_CACHE_DIR": ""})
    assert edited.stdout == uncached.stdout != first.stdout


def test_an_empty_cache_dir_setting_turns_the_cache_off(tmp_path: Path, run_odw) -> None:
    roadmap = tmp_path / "roadmap.md"
    roadmap.write_text(ROADMAP)
    env = {**os.environ, "ODW_CACHE_DIR": "", "XDG_CACHE_HOME": str(tmp_path / "xdg")}
    assert run_odw("roadmap", str(roadmap), env=env).returncode == 0
    assert not (tmp_path / "xdg").exists()
    del env["ODW_CACHE_DIR"]
    assert run_odw("roadmap", str(roadmap), env=env).returncode == 0
    assert len(_entries(tmp_path / "xdg" / "odw")) == 1


def test_a_very_long_text_is_parsed_every_time_not_kept(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(roadmap_cache, "MAX_CACHED_CHARS", len(ROADMAP) - 1)
    assert read_roadmap(str(tmp_path / "r.md"), ROADMAP, tmp_path) == parse_roadmap(ROADMAP)
    assert _entries(tmp_path) == []
    monkeypatch.setattr(roadmap_cache, "MAX_CACHED_CHARS", len(ROADMAP))
    read_roadmap(str(tmp_path / "r.md"), ROADMAP, tmp_path)
    assert len(_entries(tmp_path)) == 1
