"""`odw roadmap` and `odw next` as a maintainer runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROADMAP = """\
## 1. Phase

### 1.1. Step

- [x] 1.1.1. First
- [ ] 1.1.2. Second
  - Requires 1.1.1.
  - Success: it works.
- [ ] 1.1.3. Third. Requires 1.1.2 and 4.4.4.
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "docs" / "roadmap.md"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    return path


def test_roadmap_json_shape(tmp_path, run_odw) -> None:
    _write(tmp_path, ROADMAP)
    res = run_odw("roadmap", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    first = data["tasks"][1]
    assert {
        k: first[k] for k in ("id", "title", "done", "requires", "line", "addendumOf", "success")
    } == {
        "id": "1.1.2",
        "title": "Second",
        "done": False,
        "requires": ["1.1.1"],
        "line": 6,
        "addendumOf": None,
        "success": "it works.",
    }
    assert data["errors"] == []
    assert data["warnings"][0]["kind"] == "unknown-dependency"
    assert data["warnings"][0]["ids"] == ["1.1.3", "4.4.4"]


def test_roadmap_table(tmp_path, run_odw) -> None:
    path = _write(tmp_path, ROADMAP)
    res = run_odw("roadmap", str(path))
    assert res.returncode == 0
    assert "1.1.2" in res.stdout and "warning [unknown-dependency]" in res.stdout


def test_missing_file_exits_1_with_one_line(tmp_path, run_odw) -> None:
    res = run_odw("roadmap", cwd=tmp_path)
    assert res.returncode == 1
    assert res.stdout == ""
    assert res.stderr.count("\n") == 1 and "docs/roadmap.md" in res.stderr
    assert "Traceback" not in res.stderr


def test_binary_file_exits_1(tmp_path, run_odw) -> None:
    bad = tmp_path / "r.md"
    bad.write_bytes(b"\xff\xfe\x00bad")
    res = run_odw("roadmap", str(bad))
    assert res.returncode == 1 and "not UTF-8" in res.stderr


def test_errors_exit_2_and_next_schedules_nothing(tmp_path, run_odw) -> None:
    path = _write(
        tmp_path,
        "- [ ] 1.1.1. A\n- [ ] 1.1.1. B\n- [ ] 1.1.2. C. Requires 1.1.3.\n"
        "- [ ] 1.1.3. D. Requires 1.1.2.\n- [ ] 1.1.4. Free\n",
    )
    res = run_odw("roadmap", str(path), "--json")
    assert res.returncode == 2
    errors = json.loads(res.stdout)["errors"]
    assert [(e["kind"], e["ids"], e["lines"]) for e in errors] == [
        ("duplicate-id", ["1.1.1"], [1, 2]),
        ("cycle", ["1.1.2", "1.1.3"], [3, 4]),
    ]
    nxt = run_odw("next", str(path), "--json")
    assert nxt.returncode == 2
    assert json.loads(nxt.stdout)["ready"] == []
    assert run_odw("next", str(path)).returncode == 2


def test_next_json_with_taken_and_held(tmp_path, run_odw) -> None:
    path = _write(
        tmp_path,
        "- [ ] 1.1.1. A\n- [ ] 1.1.2. B\n- [ ] 1.1.3. C\n- [ ] 1.1.4. D. Requires 1.1.1.\n",
    )
    res = run_odw("next", str(path), "--json", "--taken", "1.1.1", "--held", "1.1.3")
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["ready"] == [
        {"id": "1.1.2", "kind": "normal", "branch": "roadmap-1-1-2", "subtasks": []}
    ]
    assert data["blocked"] == [{"id": "1.1.4", "missing": ["1.1.1"], "external": []}]


def test_checklists_with_no_readable_task_exit_2_naming_the_first_line(tmp_path, run_odw) -> None:
    path = _write(tmp_path, "# Plan\n\n- [ ] Step one: draft it\n- [ ] Step two\n")
    for command in ("roadmap", "next"):
        res = run_odw(command, str(path))
        assert res.returncode == 2, res.stdout
        assert "error [no-readable-task] line 3 is a checklist item, '- [ ] Step one" in res.stdout


UNREAD = """\
- [ ] 2.1.1. Base
- [ ] 2.1.2. Cache
  - Depends on: 2.1.1.
- [ ] 2.1.3. Index
  - Depends on the storage work landing first.
"""


def test_dependency_forms_hold_tasks_and_unread_ones_are_warned_in_roadmap_and_next(
    tmp_path, run_odw
) -> None:
    path = _write(tmp_path, UNREAD)
    shown = run_odw("roadmap", str(path))
    nxt = run_odw("next", str(path))
    for res in (shown, nxt):
        assert res.returncode == 0, res.stderr
        assert "warning [unread-dependency] task 2.1.3 (line 4): 'Depends on the storage" in (
            res.stdout
        )
        assert "on line 5 looks like a dependency" in res.stdout
    data = json.loads(run_odw("next", str(path), "--json").stdout)
    assert [c["id"] for c in data["ready"]] == ["2.1.1", "2.1.3"]
    assert data["blocked"] == [{"id": "2.1.2", "missing": ["2.1.1"], "external": []}]


def test_roadmap_json_keeps_its_shape_with_the_new_forms(tmp_path, run_odw) -> None:
    data = json.loads(run_odw("roadmap", str(_write(tmp_path, UNREAD)), "--json").stdout)
    assert set(data) == {"tasks", "errors", "warnings"}
    assert {frozenset(t) for t in data["tasks"]} == {
        frozenset(
            {"id", "title", "done", "requires", "line", "addendumOf", "success", "context",
             "external"}
        )
    }  # fmt: skip
    assert data["tasks"][1]["requires"] == ["2.1.1"]
    assert [set(w) for w in data["warnings"]] == [{"kind", "ids", "lines", "message"}]


EXPECTED_CORPUS = {
    # file: (task count, {id: (done, requires)})
    "df12-build.md": (
        29,
        {"1.1.2": (True, ["1.1.1"]), "2.1.1": (True, ["1"]), "5.3.2": (False, ["5.2.1", "5.1.2"])},
    ),
    "weaver.md": (
        128,
        # 13.3 contains 13.3.4 itself: its tasks before 13.3.4, with a self-reference warning.
        {
            "13.3.4": (False, ["13.1", "13.2", "13.3.1", "13.3.2", "13.3.3"]),
            "19.2.1": (False, ["14", "15", "17"]),
        },
    ),
    "cuprum.md": (58, {"6.2.1": (False, ["5", "6.1.1", "6.1.2"])}),
    "wireframe.md": (175, {"1.1.1": (True, [])}),
}


@pytest.mark.parametrize("name", sorted(EXPECTED_CORPUS), ids=sorted(EXPECTED_CORPUS))
def test_real_roadmaps(corpus, run_odw, name) -> None:
    count, samples = EXPECTED_CORPUS[name]
    res = run_odw("roadmap", str(corpus / name), "--json")
    assert res.returncode == 0, res.stderr  # every corpus roadmap reads without errors
    tasks = {t["id"]: t for t in json.loads(res.stdout)["tasks"]}
    assert len(tasks) == count
    for tid, (done, requires) in samples.items():
        assert (tasks[tid]["done"], tasks[tid]["requires"]) == (done, requires)
