"""Fixtures for the git adapter: real origins, and a `git` on PATH that records its calls.

`GitSpy` puts a wrapper named `git` first on PATH. It appends each call's argv to a
log and, on `push`, can inject an event: a rival push to the base (a race), or a
SIGKILL of its parent before or after the real push (a crash).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.gitops.origins import Origin
from tests.support import GIT_ENV

REAL_GIT = shutil.which("git") or "/usr/bin/git"

_WRAPPER = """#!/bin/sh
for a in "$@"; do printf '%s\\037' "$a"; done >> "{log}"
printf '\\n' >> "{log}"
is_push=
for a in "$@"; do [ "$a" = push ] && is_push=1; done
if [ -n "$is_push" ] && [ -n "$ODW_SPY_PUSH" ]; then
  case "$ODW_SPY_PUSH" in
    crash-before) kill -9 "$PPID"; exit 137 ;;
    crash-after) "{git}" "$@"; code=$?; kill -9 "$PPID"; exit $code ;;
    race-once|race-always)
      if [ "$ODW_SPY_PUSH" = race-always ] || [ ! -e "{log}.raced" ]; then
        : > "{log}.raced"
        n=$(date +%s%N)
        ( cd "$ODW_SPY_RACE_CLONE" && "{git}" fetch -q origin && \
          "{git}" reset -q --hard "origin/$ODW_SPY_BASE" && echo "$n" > "rival-$n.txt" && \
          "{git}" add "rival-$n.txt" && "{git}" commit -qm "rival $n" && \
          "{git}" push -q origin "HEAD:$ODW_SPY_BASE" ) >/dev/null 2>&1
      fi ;;
  esac
fi
exec "{git}" "$@"
"""


@dataclass
class GitSpy:
    bin_dir: Path
    log: Path

    def env(self, push: str | None = None, race_clone: Path | None = None) -> dict[str, str]:
        import os

        env = {"PATH": f"{self.bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
        if push:
            env["ODW_SPY_PUSH"] = push
        if race_clone is not None:
            env["ODW_SPY_RACE_CLONE"] = str(race_clone)
            env["ODW_SPY_BASE"] = "main"
        return env

    def calls(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [line.split("\x1f")[:-1] for line in self.log.read_text().splitlines()]

    def subcommands(self) -> list[str]:
        """The git subcommand of each call (the first argument after the `-c` options)."""
        out = []
        for argv in self.calls():
            i = 0
            while i < len(argv) and argv[i] == "-c":
                i += 2
            out.append(argv[i] if i < len(argv) else "")
        return out

    def reset(self) -> None:
        self.log.unlink(missing_ok=True)


@pytest.fixture
def spy(tmp_path: Path) -> GitSpy:
    bin_dir = tmp_path / "spybin"
    bin_dir.mkdir()
    log = tmp_path / "git-calls.log"
    wrapper = bin_dir / "git"
    wrapper.write_text(_WRAPPER.format(log=log, git=REAL_GIT))
    wrapper.chmod(0o755)
    return GitSpy(bin_dir, log)


@pytest.fixture
def origin(tmp_path: Path) -> Origin:
    return Origin.create(tmp_path / "remote", ["1.1.1", "1.1.2", "1.1.3", "1.1.4", "1.1.5"])


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def git_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
