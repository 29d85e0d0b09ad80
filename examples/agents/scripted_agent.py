#!/usr/bin/env python3
"""A deterministic agent that follows ODW's agent contract without a model.

It carries a roadmap of small tasks to completion so ODW can be demonstrated
and tested end to end: it writes an ExecPlan when planning, approves when asked
to review, writes one file per task when implementing, and prints the
completion marker. A script file can make chosen stages misbehave, so failure
handling can be rehearsed on a real repository.

Environment (set by ODW): ODW_STAGE, ODW_TASK_ID, ODW_PROMPT_FILE,
ODW_COMPLETION_WORD, ODW_COMPLETION_TOKEN (print both, one space apart, on a
line of their own when done), ODW_REPORT_FILE, ODW_EXECPLAN_PATH.
Optional: SCRIPTED_AGENT_SCRIPT, a JSON file such as
  {"1.2.3": {"implement": ["no-marker", "pass"]}, "*": {"review": ["approve"]}}
whose words are consumed one per attempt of that stage (then `pass`):
  pass | no-marker | exit:N | hang | crash | changes | approve
and SCRIPTED_AGENT_STATE, a directory (outside the checkout) for the counters.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import sys
import time
from pathlib import Path


def _next_word(task: str, stage: str) -> str:
    script_path = os.environ.get("SCRIPTED_AGENT_SCRIPT")
    if not script_path:
        return "pass"
    script = json.loads(Path(script_path).read_text())
    words = (script.get(task) or {}).get(stage) or (script.get("*") or {}).get(stage) or []
    if not words:
        return "pass"
    state_dir = Path(os.environ.get("SCRIPTED_AGENT_STATE") or Path(script_path).parent / ".state")
    state_dir.mkdir(parents=True, exist_ok=True)
    counter = state_dir / f"{re.sub(r'[^0-9A-Za-z]+', '-', task)}.{stage}.count"
    # A stage's lanes run at once and share the counter: read and bump it under
    # a lock, or one lane reads the other's half-written file.
    with (state_dir / "counters.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        used = int(counter.read_text()) if counter.exists() else 0
        counter.write_text(str(used + 1))
    return words[used] if used < len(words) else "pass"


# The sections ODW's plan stage requires besides Purpose and Progress (README,
# "The ExecPlan contract").
SECTIONS = (
    "Constraints",
    "Risks",
    "Decision log",
    "Context and orientation",
    "Plan of work",
    "Concrete steps",
    "Validation and acceptance",
    "Idempotence and recovery",
)


def _set_status(plan: Path, status: str) -> None:
    text = plan.read_text() if plan.exists() else ""
    if re.search(r"(?m)^Status:.*$", text):
        text = re.sub(r"(?m)^Status:.*$", f"Status: {status}", text, count=1)
    else:
        text = f"Status: {status}\n\n{text}"
    plan.write_text(text)


def main() -> int:
    stage = os.environ["ODW_STAGE"]
    task = os.environ["ODW_TASK_ID"]
    marker = f"{os.environ['ODW_COMPLETION_WORD']} {os.environ['ODW_COMPLETION_TOKEN']}"
    report = os.environ.get("ODW_REPORT_FILE")
    slug = re.sub(r"[^0-9A-Za-z]+", "-", task).strip("-")
    plan = Path(os.environ.get("ODW_EXECPLAN_PATH") or f"docs/execplans/{slug}.md")
    prompt = sys.stdin.read()
    word = _next_word(task, stage)
    print(f"scripted agent: stage={stage} task={task} action={word} prompt={len(prompt)} chars")

    if word == "hang":
        time.sleep(3600)
    if word == "crash":
        os.abort()
    if word.startswith("exit:"):
        return int(word.split(":", 1)[1])

    if stage == "plan":
        plan.parent.mkdir(parents=True, exist_ok=True)
        sections = "".join(f"## {name}\n\nScripted: nothing to say.\n\n" for name in SECTIONS)
        plan.write_text(
            f"# ExecPlan {task}\n\nStatus: DRAFT\n\n## Purpose\n\nDeliver roadmap task {task}.\n\n"
            "## Progress\n\n- [ ] Implement\n- [ ] Validate\n\n" + sections
        )
    elif stage in ("implement", "fix"):
        out = Path("work") / f"{slug}.txt"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(f"task {task} done by the scripted agent ({stage})\n")
        if plan.exists():
            _set_status(plan, "COMPLETE")
    elif stage in ("design-review", "review") and report:
        decision = "changes" if word == "changes" else "approve"
        findings = []
        if decision == "changes":
            findings = [{"summary": "scripted change request", "path": None, "line": None}]
        Path(report).write_text(json.dumps({"decision": decision, "findings": findings}))
    elif stage == "assess" and report:
        verdict = {"classification": "continue-manual", "summary": "scripted: no judgement"}
        Path(report).write_text(json.dumps({**verdict, "missingEvidence": [], "residualRisk": []}))

    if word != "no-marker":
        # Split the marker over two writes: ODW must find it across chunk boundaries.
        half = len(marker) // 2
        sys.stdout.write(marker[:half])
        sys.stdout.flush()
        sys.stdout.write(marker[half:] + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
