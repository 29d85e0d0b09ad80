"""`--dry-run` writes nothing; the CLI's exit codes, one-line errors and JSON fields."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from app.store import Store
from app.store.store import sqlite_url
from tests.local.conftest import AGENT, FAST, make_project, result_of
from tests.support import git

pytestmark = pytest.mark.slow

ROADMAP = """\
## 1. Work

- [ ] 1.1. First
- [ ] 1.2. Second
  - Requires 1.1.
- [ ] 1.3. Third
- [ ] 1.4. Fourth
"""


def tree_digest(root: Path) -> dict[str, str]:
    """Every file and symlink under `root` with a hash of its bytes."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + [d for d in dirnames if Path(dirpath, d).is_symlink()]:
            path = Path(dirpath, name)
            rel = str(path.relative_to(root))
            data = os.readlink(path).encode() if path.is_symlink() else path.read_bytes()
            out[rel] = hashlib.sha256(data).hexdigest()
        dirnames[:] = [d for d in dirnames if not Path(dirpath, d).is_symlink()]
    return out


def test_dry_run_reports_the_frontier_and_changes_nothing(tmp_path: Path) -> None:
    p = make_project(tmp_path, ROADMAP, {"config": {"maxParallel": 2, **FAST}})
    git(p.origin, "branch", "roadmap-1-4", "main")  # a survivor of an earlier run
    refs = git(p.clone, "for-each-ref")
    clone_before, origin_before = tree_digest(p.clone), tree_digest(p.origin)

    code, data, stderr = p.run_json("--dry-run")

    # A real run would halt on the unresolved survivor: so does the dry run, exit 1.
    assert code == 1, stderr
    assert data["halted"].startswith("needs-operator-recovery")
    assert data["live"] is None
    assert data["dryRun"] is True
    assert data["frontier"]["ready"] == ["1.1", "1.3"]
    assert [d["task"] for d in data["frontier"]["dispatch"]] == ["1.1", "1.3"]
    assert {d["stage"] for d in data["frontier"]["dispatch"]} == {"plan"}
    assert data["frontier"]["blocked"] == [{"id": "1.2", "missing": ["1.1"], "external": []}]
    assert data["held"] == [{"id": "1.4", "reason": "surviving branch roadmap-1-4 on origin"}]
    assert data["processed"] == []
    assert result_of(data, "1.1")["detail"] == "dry run: would start"
    assert tree_digest(p.clone) == clone_before
    assert tree_digest(p.origin) == origin_before
    assert git(p.clone, "for-each-ref") == refs
    assert not (p.clone / ".git" / "odw").exists()


def test_exit_codes_and_one_line_errors(tmp_path: Path, run_odw) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    r = run_odw("run", "--local", str(plain), "--agent", AGENT)
    assert r.returncode == 1 and "not a git repository" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1

    lonely = tmp_path / "lonely"
    git(tmp_path, "init", "-q", str(lonely))
    r = run_odw("run", "--local", str(lonely), "--agent", AGENT)
    assert r.returncode == 1 and "no remote named origin" in r.stderr

    (tmp_path / "a").mkdir()
    p = make_project(tmp_path / "a", ROADMAP)
    r = run_odw("run", "--local", str(p.clone))
    assert r.returncode == 2 and "no agent command" in r.stderr

    bad = tmp_path / "override.yml"
    bad.write_text("config:\n  maxParallel: 0\n")
    r = run_odw("run", "--local", str(p.clone), "--agent", AGENT, "--config", str(bad))
    assert r.returncode == 2 and "maxParallel" in r.stderr

    r = run_odw("run", "--local", str(p.clone), "--agent", AGENT, "--task", "9.9")
    assert r.returncode == 2 and "--task 9.9" in r.stderr

    r = run_odw("run", "--local", str(p.clone), "--agent", AGENT, "--base", "nope")
    assert r.returncode == 1 and "no branch nope" in r.stderr
    assert not (p.clone / ".git" / "odw").exists()

    # A run whose base is owned by a live process is refused, not displaced.
    store = Store.open(sqlite_url(p.clone / ".git" / "odw" / "local.sqlite3"))
    try:
        assert store.leases.acquire("local-base:main", "someone-else", 60)
        r = run_odw("run", "--local", str(p.clone), "--agent", AGENT)
        assert r.returncode == 1 and "live process" in r.stderr
        assert p.landings() == []
    finally:
        store.close()


def test_roadmap_problems_schedule_nothing(tmp_path: Path, run_odw) -> None:
    dup = "## 1. W\n\n- [ ] 1.1. One\n- [ ] 1.1. Again\n"
    p = make_project(tmp_path, dup)
    r = run_odw("run", "--local", str(p.clone), "--agent", AGENT)
    assert r.returncode == 2
    assert "duplicate" in r.stderr and "nothing was scheduled" in r.stderr
    assert p.origin_branches() == {"main"}

    git(p.clone, "rm", "-q", "docs/roadmap.md")
    git(p.clone, "commit", "-q", "-m", "drop the roadmap")
    git(p.clone, "push", "-q", "origin", "main")
    r = run_odw("run", "--local", str(p.clone), "--agent", AGENT)
    assert r.returncode == 1 and "docs/roadmap.md is missing on origin/main" in r.stderr


def test_json_result_fields_task_filter_and_config_file(tmp_path: Path) -> None:
    p = make_project(tmp_path, ROADMAP, {"agent": "false", "config": {"maxParallel": 1}})
    override = tmp_path / "odw.json"
    override.write_text(json.dumps({"config": FAST}))
    proc = p.run("--json", "--task", "1.3", "--config", str(override), "--max-parallel", "2")

    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    for key in ("runId", "base", "processed", "results", "halted", "faultMetrics", "summary"):
        assert key in data
    assert set(data["faultMetrics"]) == {
        "infraRetries",
        "infraFaults",
        "providerFaults",
        "authFaults",
    }
    assert data["processed"] == ["1.3"]
    assert "maxParallel 2" in data["summary"]
    row = result_of(data, "1.3")
    for key in ("id", "status", "stage", "detail", "attempts", "verdict"):
        assert key in row
    held = {h["id"] for h in data["held"]}
    assert held == {"1.1", "1.2", "1.4"}
    assert result_of(data, "1.1")["status"] == "pending"
    assert p.landings() == ["1.3"]
