"""CLI texts as a maintainer reads them, pinned by golden files.

Regenerate after an intended change with `ODW_UPDATE_GOLDEN=1 pytest tests/cli`
and review the diff like code.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden"

CASES = [
    ("next-text", ["next", "mixed.md"], 2),
    ("next-json", ["next", "mixed.md", "--json"], 2),
    ("roadmap-json", ["roadmap", "mixed.md", "--json"], 2),
    ("next-with-taken-and-held", ["next", "mixed.md", "--taken", "1.1.3"], 2),
]


@pytest.mark.parametrize(("name", "args", "code"), CASES, ids=[c[0] for c in CASES])
def test_cli_text_matches_golden(run_odw, name: str, args: list[str], code: int) -> None:
    res = run_odw(*args, cwd=GOLDEN)
    assert res.returncode == code, res.stderr
    assert "Traceback" not in res.stderr
    path = GOLDEN / f"{name}.out"
    if os.environ.get("ODW_UPDATE_GOLDEN"):
        path.write_text(res.stdout)
    assert res.stdout == path.read_text()
