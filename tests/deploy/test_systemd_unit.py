"""The systemd unit docs/deploy.md gives is one systemd accepts as written."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from tests import needs
from tests.conftest import REPO_ROOT, odw_executable

DEPLOY = REPO_ROOT / "docs" / "deploy.md"


def unit_text() -> str:
    (unit,) = re.findall(r"```ini\n(.*?)```", DEPLOY.read_text(), flags=re.DOTALL)
    return unit


def test_the_documented_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        needs.unavailable(needs.SYSTEMD_ANALYZE)
    unit = unit_text()
    assert "ExecStart=/opt/odw/bin/odw serve " in unit
    # The documented install path, pointed at this install's odw.
    path = tmp_path / "odw.service"
    path.write_text(unit.replace("/opt/odw/bin/odw", odw_executable()))
    proc = subprocess.run(
        [analyze, "verify", str(path)], capture_output=True, text=True, timeout=60, check=False
    )
    # Unknown keys are only warnings: any output at all is a fault in the unit.
    assert proc.returncode == 0 and not (proc.stdout + proc.stderr).strip(), proc.stderr
