"""Secrets scan of a local run: credentials in ODW's environment never reach a
log, stdout, stderr, a child's command line, a git config, a mirror, a
verdict, an artifact or a commit, even with an agent that dumps its
environment into its log and into a committed file."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

from tests.leakscan import CmdlineSampler, leaks
from tests.local.conftest import FAST, SCRIPTED_AGENT
from tests.support import git

ROADMAP = "## Phase 1\n- [ ] 1.1.1. First\n"
CREDENTIALS = (
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "ODW_GIT_TOKEN",
    "ODW_WEBHOOK_SECRET",
    "ODW_WEBHOOK_SECRET_PREVIOUS",
    "ODW_ADMIN_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
)
# Dumps its whole environment to its log and into the work it commits, then
# does its job (the scripted agent), so the run lands what it dumped.
LEAKY_AGENT = f"env; env > env-dump.txt; {sys.executable} {SCRIPTED_AGENT}"


def recognisable(name: str) -> str:
    return f"odwscan{name.lower().replace('_', '')}{secrets.token_hex(8)}"


def _everything_written(root: Path, repos: list[Path]) -> dict[str, bytes]:
    """Every file under `root` as stored, and each repository's whole history
    and config as git shows them (objects are compressed on disk)."""
    found = {str(p): p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}
    for repo in repos:
        history = git(repo, "log", "--all", "-p", "--format=%H %an %ae%n%B")
        found[f"{repo} history"] = history.encode()
        found[f"{repo} config"] = git(repo, "config", "--list", "--show-origin").encode()
    return found


def test_a_local_run_leaks_no_credential_anywhere(project_factory) -> None:  # type: ignore[no-untyped-def]
    p = project_factory(ROADMAP, {"config": FAST})
    planted = {name: recognisable(name) for name in CREDENTIALS}
    p.env.update(planted)
    with CmdlineSampler() as sampler:
        proc = subprocess.run(
            [p.argv()[0], "run", "--local", str(p.clone), "--agent", LEAKY_AGENT, "--json"],
            capture_output=True,
            text=True,
            timeout=150,
            env={**os.environ, **p.env},
            check=False,
        )
    assert proc.returncode == 0, proc.stderr
    assert sampler.samples > 10
    # The agent really dumped its environment, and the dump landed on the base.
    assert "ODW_TASK_ID=1.1.1" in git(p.origin, "show", "main:env-dump.txt")
    written = _everything_written(p.root, [p.origin, p.clone])
    written["stdout"] = proc.stdout.encode()
    written["stderr"] = proc.stderr.encode()
    for i, cmdline in enumerate(sampler.seen):
        written[f"cmdline #{i}"] = cmdline
    assert leaks(planted, written) == []
