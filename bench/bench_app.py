"""The App on the fake GitHub: requests per landed task, and webhook-to-next-dispatch time.

The demo's roadmap (`make demo`: 3 tasks, one dependency) runs end to end: the fake GitHub, the
real service (`odw serve`, SQLite) and the local "Actions" running `odw stage`
with the scripted agent. Printed beside each figure, from the same run:

- requests per landed task beside the minimum the pipeline needs
  (`request_floor.NEEDED`, the requests no landed task can do without); the
  issue's goal is at most 30;

- installation tokens minted for the run, apart (they are not counted above);
- the time from a stage run's completion (its `workflow_run` webhook) to the
  dispatch of the task's next stage, beside the round trip of one signed
  webhook delivery to the same service (what acknowledging alone costs).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

import requests

from bench.request_floor import floor
from tests.apphost.demo import ROADMAP
from tests.apphost.harness import AGENT, REPO, Service, app_env, sample_files, wait_until
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.oracles import REST_OPENAPI


class Timed(LocalActions):
    """The local Actions, noting when each run completed (its webhook is sent then)."""

    def execute(self, run: s.WorkflowRun) -> None:
        super().execute(run)
        self.completed[run.id] = time.monotonic()

    completed: dict[int, float]


def _ack_round_trip(url: str, secret: str, n: int = 20) -> list[float]:
    times = []
    for _ in range(n):
        body = json.dumps({"zen": "bench", "hook_id": 1}).encode()
        signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        headers = {
            "Content-Type": "application/json",
            "X-GitHub-Event": "ping",
            "X-GitHub-Delivery": str(uuid.uuid4()),
            "X-Hub-Signature-256": signature,
        }
        start = time.monotonic()
        requests.post(url, data=body, headers=headers, timeout=10)
        times.append(time.monotonic() - start)
    return times


def run_once(root: Path) -> dict[str, float]:
    fake = FakeGitHub(root / "github").start()
    dispatched: dict[int, float] = {}

    def note(run: s.WorkflowRun) -> None:
        dispatched.setdefault(run.id, time.monotonic())

    fake.on_dispatch.append(note)
    data = root / "service"
    data.mkdir()
    env = app_env(fake, root, ODW_LOG_LEVEL="WARNING")
    service = Service(fake, data, env).start()
    actions = Timed(fake, root / "actions", AGENT)
    actions.completed = {}
    actions.start()
    try:
        fake.create_repository(REPO, sample_files(ROADMAP))
        fake.install("octo", [REPO])
        store = service.store()
        wait_until("installation", lambda: store.installations.installation_for_repository(REPO))
        store.close()
        before = len(fake.requests)
        service.run_app()
        wait_until(
            "the run to finish",
            lambda: (r := service.runs()) and r[0]["status"] == "finished",
            timeout=600,
            every=0.5,
        )
        time.sleep(1.0)  # the last views sync (PR closed, checks concluded)
        made = fake.requests[before:]
        acks = _ack_round_trip(f"{service.url}/webhooks", fake.webhooks.secret)
    finally:
        actions.stop()
        service.stop()
        fake.stop()
    tasks = ROADMAP.count("- [ ]")
    landed = len(
        {
            c.name
            for c in fake.check_runs.values()
            if c.name != "ODW · run" and c.conclusion == "success"
        }
    )
    tokens = sum(1 for r in made if r["path"].endswith("/access_tokens"))
    rest = len(made) - tokens
    stages = len(fake.runs)
    by_task: dict[str, list[tuple[float, int]]] = {}
    for run in fake.runs.values():
        by_task.setdefault(run.inputs["task"], []).append((dispatched[run.id], run.id))
    gaps = []
    for runs in by_task.values():
        runs.sort()
        for (_, done_id), (next_at, _) in itertools.pairwise(runs):
            if done_id in actions.completed and next_at > actions.completed[done_id]:
                gaps.append(next_at - actions.completed[done_id])
    result = {
        "tasks": tasks,
        "landed": landed,
        "per_landed": rest / landed if landed else float("nan"),
        "floor": floor(stages, landed) if landed else float("nan"),
        "tokens": tokens,
        "stages": stages,
        "gap_median": statistics.median(gaps) if gaps else float("nan"),
        "gap_p90": sorted(gaps)[int(len(gaps) * 0.9)] if gaps else float("nan"),
        "ack_median": statistics.median(acks),
    }
    kinds = Counter(f"{r['method']} {_route(r['path'])}" for r in made)
    result["top"] = kinds.most_common(12)  # type: ignore[assignment]
    return result


def _route(path: str) -> str:
    parts = path.split("/")
    return "/".join("{n}" if p.isdigit() else p for p in parts[4:])


def main() -> None:
    if not REST_OPENAPI.is_file():
        print("bench_app: GitHub's OpenAPI description is missing: run `make oracles`")
        return
    with tempfile.TemporaryDirectory(prefix="odw-bench-app-") as tmp:
        r = run_once(Path(tmp))
    print(
        f"tasks: {r['tasks']:.0f} (the demo's roadmap), landed: {r['landed']:.0f},"
        f" stage runs dispatched: {r['stages']:.0f}"
    )
    print(
        f"requests per landed task: {r['per_landed']:.1f}"
        f" (minimum the pipeline needs: {r['floor']:.1f}; goal <= 30)"
    )
    print(
        f"  + {r['tokens']:.0f} installation tokens for the run (not counted: minted"
        " once an hour per permission set)"
    )
    print(f"  most frequent: {', '.join(f'{k} x{n}' for k, n in r['top'])}")  # type: ignore[attr-defined]
    print(
        f"workflow_run webhook -> next dispatch: median {r['gap_median'] * 1000:.0f} ms, "
        f"p90 {r['gap_p90'] * 1000:.0f} ms"
        f"  (baseline: one webhook acknowledged, median {r['ack_median'] * 1000:.1f} ms)"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
