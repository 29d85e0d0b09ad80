"""Start-up: `odw --help` imports no command module, and a closed pipe is not a crash."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import odw_executable
from tests.gitops.origins import Origin

PROBE = """
import sys
from app.cli.main import main
try:
    main({args!r})
except SystemExit:
    pass
heavy = sorted(m for m in sys.modules if m.startswith(("app.cli.", "pydantic", "app.engine",
    "app.store", "app.local", "app.gitops", "actions", "yaml", "sqlalchemy")))
print(",".join(heavy))
"""

CASES = [
    (
        "help lists commands only",
        ["--help"],
        {"app.cli.main", "app.cli.commands", "app.cli.errors"},
    ),
    (
        "roadmap imports only its module",
        ["roadmap", "--json", "/nonexistent/roadmap.md"],
        {
            "app.cli.main",
            "app.cli.commands",
            "app.cli.errors",
            "app.cli.output",
            "app.cli.roadmap_cmd",
            "app.cli.roadmap_cache",
        },
    ),
]


@pytest.mark.parametrize(("args", "allowed"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_commands_import_only_what_they_run(args: list[str], allowed: set[str]) -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    ).stdout.strip()
    loaded = set(out.splitlines()[-1].split(",")) - {""}
    assert loaded <= allowed, f"imported at start-up: {sorted(loaded - allowed)}"


def _big_roadmap(path: Path, n: int = 3000) -> Path:
    lines = [f"- [ ] 1.{i}. Task number {i} with a fairly long title" for i in range(1, n + 1)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    roadmap = _big_roadmap(tmp_path / "roadmap.md")
    proc = subprocess.Popen(
        [odw_executable(), "next", str(roadmap)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith("READY")
    proc.stdout.close()  # what `| head -1` does
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 141
    assert err == ""


# What a landing needs no part of: pydantic and a lock library (a landing builds no
# model and locks with flock), nor the standard library's heavier modules.
HEAVY = ("pydantic", "pydantic_core", "filelock", "dataclasses", "inspect", "typing",
         "logging", "hashlib", "shutil", "bz2", "lzma", "tempfile")  # fmt: skip

LANDING_PROBE = """
import sys
from app.cli.main import main
code = main(["integrate", *sys.argv[1:]])
print(code, ",".join(sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})))
"""


def _probe_landing(*args: str) -> list[str]:
    """`odw integrate ARGS` in a fresh interpreter: [exit code, heavy modules it loaded...]."""
    return (
        subprocess.run(
            [sys.executable, "-c", LANDING_PROBE.format(heavy=HEAVY), *args],
            capture_output=True,
            text=True,
            check=True,
            cwd=Path(__file__).resolve().parents[2],
        )
        .stdout.splitlines()[-1]
        .split()
    )


def test_odw_integrate_imports_neither_pydantic_nor_a_lock_library(tmp_path: Path) -> None:
    """Local mode runs `odw integrate` once per landing: its start-up is part of every landing."""
    out = _probe_landing("--repo", str(tmp_path), "--base", "main", "--branch", "b",
                         "--task", "not-an-id", "--data-dir", str(tmp_path / "data"))  # fmt: skip
    assert out[0] == "2", "the bad task id is a usage error, reached after the imports"
    assert out[1:] == [], f"imported by odw integrate: {out[1:]}"


def test_a_whole_landing_imports_none_of_the_heavy_modules(tmp_path: Path) -> None:
    """Not at start-up, and not on the way: fetch, checks, rebase, tick, squash, push, report."""
    origin = Origin.create(tmp_path / "remote", ["1.1.1", "1.1.2"])
    data = tmp_path / "data"
    for tid in ("1.1.1", "1.1.2"):
        branch = origin.task_branch(tid)
        out = _probe_landing("--repo", str(origin.path), "--base", "main", "--branch", branch,
                             "--task", tid, "--data-dir", str(data), "--keep-branch")  # fmt: skip
        assert out[0] == "0", out
    # The first landing in a data directory writes the askpass script (`tempfile`);
    # every later one, the second here, is what each landing costs.
    assert out[1:] == [], f"imported by a landing: {out[1:]}"
    assert "- [x] 1.1.2. " in origin.roadmap()


READ_PROBE = """
import sys
from app.cli.main import main
code = main(sys.argv[1:])
print()
print(code, ",".join(sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})))
"""
# What reading a roadmap needs no part of: its records are `app.core.values.Value`s.
READ_HEAVY = ("pydantic", "dataclasses", "inspect", "typing", "logging", "hashlib", "shutil")


@pytest.mark.parametrize("command", [["next"], ["next", "--json"], ["roadmap"]], ids=" ".join)
def test_reading_a_roadmap_imports_none_of_the_heavy_modules(
    tmp_path: Path, command: list[str]
) -> None:
    """Scripts and people ask `odw next` again after every landing; a read is its start-up."""
    roadmap = tmp_path / "roadmap.md"
    roadmap.write_text(
        "- [x] 1.1. Done.\n- [ ] 1.2. Open. Requires 1.1 and Podbot Step 4.5.\n"
        "- [ ] 1.3. Waits. Requires 1.2 and 9.9.\n"
    )
    env = {**os.environ, "ODW_CACHE_DIR": str(tmp_path / "cache")}
    for read in ("first read", "cached read"):
        out = (
            subprocess.run(
                [sys.executable, "-c", READ_PROBE.format(heavy=READ_HEAVY), *command, str(roadmap)],
                capture_output=True,
                text=True,
                check=True,
                cwd=Path(__file__).resolve().parents[2],
                env=env,
            )
            .stdout.splitlines()[-1]
            .split()
        )
        assert out[0] == "0", out
        assert out[1:] == [], f"imported by odw {' '.join(command)} ({read}): {out[1:]}"
    assert list((tmp_path / "cache" / "roadmaps").iterdir()), "the second read was cached"


PARSER_PROBE = """
import sys
from app.cli.main import main
code = main(sys.argv[1:])
print()
print(code, ",".join(sorted(m for m in sys.modules if m in {parser!r})))
"""
PARSER = ("app.core.graph", "app.core.requires", "app.core.roadmap_parse", "app.core.roadmap_scan")


def test_a_cached_read_imports_no_parser_code(tmp_path: Path) -> None:
    """A roadmap read before comes from the cache: the model, never the parser."""
    roadmap = tmp_path / "roadmap.md"
    roadmap.write_text("- [x] 1.1. Done.\n- [ ] 1.2. Open. Requires 1.1.\n")
    env = {**os.environ, "ODW_CACHE_DIR": str(tmp_path / "cache")}
    runs = [
        subprocess.run(
            [sys.executable, "-c", PARSER_PROBE.format(parser=PARSER), "next", str(roadmap)],
            capture_output=True, text=True, check=True, env=env,
            cwd=Path(__file__).resolve().parents[2],
        ).stdout.splitlines()[-1].split()
        for _ in range(2)
    ]  # fmt: skip
    assert runs[0] == ["0", ",".join(PARSER)], "the first read parses"
    assert runs[1] == ["0"], f"a cached read imported {runs[1][1:]}"
