"""What a soak did, read from GitHub's side (the fake's state and request log)
and the inbox: landings per task, effects performed more than once, deliveries
never finished. The processes' own accounts are not trusted."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from app.store import Store
from tests.apphost.harness import FINAL_DELIVERY, trailers
from tests.fakegithub import FakeGitHub

REPO_PATH = re.compile(r"/repos/(?P<repo>[^/]+/[^/]+)/(?P<rest>.*)$")


@dataclass
class Audit:
    """Each list names what went wrong, so a failing soak says where to look."""

    landed: Counter[str] = field(default_factory=Counter)  # "repo task" -> squash commits
    missing: list[str] = field(default_factory=list)  # tasks never landed
    landed_twice: list[str] = field(default_factory=list)
    effects_twice: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)  # delivery ids never finished

    @property
    def clean(self) -> bool:
        return not (self.missing or self.landed_twice or self.effects_twice or self.lost)


def landings(fake: FakeGitHub, repo: str) -> Counter[str]:
    """Task id -> how many commits on main carry its `ODW-Task` trailer."""
    return Counter(trailers(fake.repos[repo]))


def repeated_effects(requests: list[dict[str, Any]]) -> list[str]:
    """Effects GitHub accepted more than once: a squash merge per pull request,
    a check run per (head, name), a workflow dispatch per attempt (its `tag`
    input, a keyed hash of the attempt's token, names one attempt)."""
    seen: Counter[tuple[str, ...]] = Counter()
    for entry in requests:
        status = int(entry.get("status") or 0)
        match = REPO_PATH.search(str(entry.get("path", "")))
        if not 200 <= status < 300 or match is None:
            continue
        repo, rest, method = match["repo"], match["rest"], entry.get("method")
        given = entry.get("body")
        body: dict[str, Any] = given if isinstance(given, dict) else {}
        if method == "PUT" and re.fullmatch(r"pulls/\d+/merge", rest):
            seen["merge", repo, rest] += 1
        elif method == "POST" and rest == "check-runs":
            seen["check run", repo, str(body.get("head_sha")), str(body.get("name"))] += 1
        elif method == "POST" and re.fullmatch(r"actions/workflows/[^/]+/dispatches", rest):
            inputs = body.get("inputs") or {}
            seen["dispatch", repo, str(inputs.get("task")), str(inputs.get("tag"))] += 1
    return sorted(f"{' '.join(key)} x{n}" for key, n in seen.items() if n > 1)


def lost_deliveries(fake: FakeGitHub, store: Store) -> list[str]:
    """Deliveries GitHub sent whose inbox row is missing or never finished."""
    lost = []
    for delivery in fake.webhooks.deliveries:
        if delivery.dropped:
            continue
        row = store.inbox.get(delivery.id)
        if row is None or row.status not in FINAL_DELIVERY:
            lost.append(f"{delivery.id} ({delivery.event}: {row.status if row else 'absent'})")
    return lost


def audit(fake: FakeGitHub, store: Store, tasks: dict[str, list[str]]) -> Audit:
    """`tasks`: repository -> the task ids its roadmap holds."""
    result = Audit()
    for repo, ids in tasks.items():
        counts = landings(fake, repo)
        for task in ids:
            result.landed[f"{repo} {task}"] = counts[task]
            if counts[task] == 0:
                result.missing.append(f"{repo} {task}")
            elif counts[task] > 1:
                result.landed_twice.append(f"{repo} {task} x{counts[task]}")
    with fake.lock:
        requests = list(fake.requests)
    result.effects_twice = repeated_effects(requests)
    result.lost = lost_deliveries(fake, store)
    return result
