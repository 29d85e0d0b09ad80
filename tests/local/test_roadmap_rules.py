"""Local mode reads real roadmaps: other projects' steps block until declared met."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.local.conftest import make_project

EXTERNAL = """\
## 1. Hosting

- [x] 1.1.1 Ratify. Requires the phase 1 hosting dependency.
- [ ] 1.1.2 Seam. Requires 1.1.1 and Podbot Step 4.5, "Normalized launch contract".
- [ ] 1.1.3 Free work.
"""

SEAM = {"id": "1.1.2", "missing": [], "external": ["Podbot Step 4.5"]}
CASES = [
    ("undeclared external blocks", {}, ["1.1.3"], [SEAM]),
    ("externalMet unblocks", {"externalMet": ["podbot step 4.5"]}, ["1.1.2", "1.1.3"], []),
]


@pytest.mark.parametrize(
    ("config", "ready", "blocked"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_external_dependencies_in_local_mode(tmp_path: Path, config, ready, blocked) -> None:
    p = make_project(tmp_path, EXTERNAL, {"config": config})
    code, data, stderr = p.run_json("--dry-run")
    assert code == 0, stderr
    assert data["frontier"]["ready"] == ready
    assert data["frontier"]["blocked"] == blocked


def test_corbusier_task_2_3_3_can_be_scheduled(tmp_path: Path, corpus: Path) -> None:
    p = make_project(tmp_path, (corpus / "corbusier.md").read_text("utf-8"))
    code, data, stderr = p.run_json("--dry-run", "--task", "2.3.3")
    assert code == 0, stderr
    assert [d["task"] for d in data["frontier"]["dispatch"]] == ["2.3.3"]


def test_a_cycle_blocks_only_its_tasks_in_local_mode(tmp_path: Path) -> None:
    loop = "## 1. W\n\n- [ ] 1.1. A. Requires 1.2.\n- [ ] 1.2. B. Requires 1.1.\n- [ ] 1.3. Free\n"
    p = make_project(tmp_path, loop)
    code, data, stderr = p.run_json("--dry-run")
    assert code == 0, stderr
    assert [e["kind"] for e in data["roadmapErrors"]] == ["cycle"]
    assert data["frontier"]["ready"] == ["1.3"]
    assert [b["id"] for b in data["frontier"]["blocked"]] == ["1.1", "1.2"]
