"""The scripted agent the App and local tests run: its script is consumed exactly once
per attempt even when a stage's lanes run at the same moment."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO_ROOT

AGENT = REPO_ROOT / "examples" / "agents" / "scripted_agent.py"
PROBE = (
    "import importlib.util, sys\n"
    "spec = importlib.util.spec_from_file_location('agent', sys.argv[1])\n"
    "agent = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(agent)\n"
    "print(agent._next_word('1.1', 'review'))\n"
)


def test_concurrent_lanes_each_take_their_own_word(tmp_path: Path) -> None:
    words = [f"changes:{i}" for i in range(24)]
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"1.1": {"review": words}}))
    env = {
        **os.environ,
        "SCRIPTED_AGENT_SCRIPT": str(script),
        "SCRIPTED_AGENT_STATE": str(tmp_path / "state"),
    }
    lanes = [
        subprocess.Popen(
            [sys.executable, "-c", PROBE, str(AGENT)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in words
    ]
    taken = []
    for lane in lanes:
        out, err = lane.communicate(timeout=60)
        assert lane.returncode == 0, err
        taken.append(out.strip())
    assert sorted(taken) == sorted(words)


def test_a_stage_without_words_passes_and_keeps_no_counter(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"1.1": {"implement": ["exit:3"]}}))
    env = {
        **os.environ,
        "SCRIPTED_AGENT_SCRIPT": str(script),
        "SCRIPTED_AGENT_STATE": str(tmp_path / "state"),
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(AGENT)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert done.stdout.strip() == "pass"
    assert not (tmp_path / "state").exists()
