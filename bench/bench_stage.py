"""`odw stage` memory and throughput when the agent prints hundreds of megabytes.

Peak RSS must stay flat as the output grows: the runner keeps a fixed head and
tail, scans for the marker in a stream and never holds the whole output.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_MEASURE = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode
print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _git(cwd: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, timeout=60)


def _repo(root: Path) -> Path:
    work = root / "work"
    work.mkdir()
    _git(work, "init", "-q", "-b", "main")
    (work / "docs").mkdir()
    (work / "docs" / "roadmap.md").write_text("- [ ] 1.1. Bench task\n")
    _git(work, "add", ".")
    _git(work, "commit", "-qm", "init")
    return work


def _run(work: Path, out: Path, megabytes: int) -> tuple[float, int, dict[str, object]]:
    token = f"tok-bench-{megabytes}"
    agent = (
        f"head -c {megabytes * 1024 * 1024} /dev/zero | tr '\\0' 'x' | fold -w 200; echo; "
        'echo "$ODW_COMPLETION_WORD $ODW_COMPLETION_TOKEN"'
    )
    odw = [
        sys.executable,
        "-m",
        "app.cli.main",
        "stage",
        "--stage",
        "review",
        "--task",
        "1.1",
        "--token",
        token,
        "--workdir",
        str(work),
        "--agent",
        agent,
        "--quiet",
        "--deadline",
        "600",
        "--out",
        str(out / token / "verdict.json"),
    ]
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", _MEASURE, *odw],
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
    )
    elapsed = time.perf_counter() - start
    _, rss_kib = proc.stdout.split()
    verdict = json.loads((out / token / "verdict.json").read_text())
    return elapsed, int(rss_kib), verdict


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="odw-bench-") as tmp:
        root = Path(tmp)
        work = _repo(root)
        out = root / "out"
        for megabytes in (1, 100, 400):
            elapsed, rss, verdict = _run(work, out, megabytes)
            marker = next(c for c in verdict["checks"] if c["name"] == "completion_marker")
            log = (out / f"tok-bench-{megabytes}" / "agent.log").stat().st_size
            mib = verdict["outputBytes"] / 2**20
            print(
                f"output {mib:7.1f} MiB: {elapsed:6.2f} s, {mib / elapsed:6.1f} MiB/s, "
                f"peak RSS {rss / 1024:6.1f} MiB, "
                f"agent.log {log / 2**20:.2f} MiB, marker {marker['status']}"
            )
