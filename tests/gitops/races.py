"""Two OS processes landing on one repository at once, through the real landing path.

Each lander is a long-lived `python -m tests.gitops.races` process with its own
data directory (its own mirror, as every `odw serve` or `odw worker` has) and the
store's lease merge lock on a shared database. A race sends both landers one
task each on the same instant: two different tasks, or (every other race) the
same task, as when a run is adopted from an owner that was in fact still alive.
Each lander reports what `integrate` returned and when it held the merge lock.

`audit` then reads the bare origin and counts what must never happen: a task
on the base more than once (a double landing), and a commit that was once on
the base, or was reported landed, but is no longer reachable from it (a lost
commit). The test (`test_landing_races.py`) runs a few races; `python -m bench
races` runs 100.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from app.gitops.lock import MergeLock
from tests.gitops.origins import roadmap_text
from tests.support import GIT_ENV, git

RUN_ID = "race"
LOCK_TTL = 30.0


def task_ids(races: int) -> list[str]:
    """Two task ids per race (a same-task race uses only the first)."""
    return [f"1.1.{i}" for i in range(1, 2 * races + 1)]


def branch_of(task_id: str) -> str:
    return "roadmap-" + task_id.replace(".", "-")


def make_origin(root: Path, tasks: list[str]) -> Path:
    """A bare origin whose `main` holds a roadmap of `tasks`, with one branch per task
    (one commit each, made in one clone and pushed at once: a clone per branch would
    cost 100 races minutes)."""
    origin = root / "origin.git"
    work = root / "seed"
    git(None, "init", "--bare", "--quiet", str(origin))
    git(None, "init", "--quiet", "-b", "main", str(work))
    (work / "docs").mkdir()
    (work / "docs" / "roadmap.md").write_text(roadmap_text(tasks))
    (work / "README.md").write_text("race\n")
    git(work, "add", "-A")
    git(work, "commit", "--quiet", "-m", "seed")
    for tid in tasks:
        git(work, "switch", "--quiet", "-c", branch_of(tid), "main")
        part = work / "parts" / f"{tid}.txt"
        part.parent.mkdir(exist_ok=True)
        part.write_text(f"part {tid}\n")
        git(work, "add", "--", str(part.relative_to(work)))
        git(work, "commit", "--quiet", "-m", f"{tid}: build it")
    git(work, "push", "--quiet", str(origin), "--all")
    return origin


@dataclass
class Outcome:
    """One lander's answer to one race."""

    task: str
    complete: bool
    sha: str | None
    summary: str
    held: tuple[float, float]  # wall-clock times the merge lock was taken and let go


@dataclass
class Tally:
    races: int = 0
    double_landings: int = 0
    lost_commits: int = 0
    failed: list[str] = field(default_factory=list)  # reports that were not a landing
    missing: int = 0  # tasks sent to a lander that are not on the base
    overlaps: int = 0  # races in which both landers held the merge lock at once
    seconds: float = 0.0

    def line(self) -> str:
        return (
            f"races: {self.races} races, {self.double_landings} double landings, "
            f"{self.lost_commits} lost commits"
        )


class Lander:
    """One landing process: a `with` block starts it, `land` asks it for one task."""

    def __init__(
        self, url: str, origin: Path, data_dir: Path, owner: str, *, locked: bool = True
    ) -> None:
        lock = "lease" if locked else "none"
        args = [url, str(origin), str(data_dir), owner, lock]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.gitops.races", *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=_child_env(),
        )
        if self._readline() != "ready":
            raise RuntimeError(f"lander {owner} did not start")

    def send(self, task: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(task + "\n")
        self.proc.stdin.flush()

    def receive(self) -> Outcome:
        line = self._readline()
        if not line:
            raise RuntimeError(f"lander exited with {self.proc.wait(10)}")
        data = json.loads(line)
        return Outcome(
            task=data["task"],
            complete=data["complete"],
            sha=data["sha"],
            summary=data["summary"],
            held=(data["held"][0], data["held"][1]),
        )

    def _readline(self) -> str:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline().strip()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)


def _child_env() -> dict[str, str]:
    return {**os.environ, **GIT_ENV}


@contextmanager
def landers(url: str, origin: Path, root: Path, *, locked: bool) -> Iterator[tuple[Lander, Lander]]:
    started: list[Lander] = []
    try:
        for name in ("a", "b"):
            data_dir, owner = root / f"data-{name}", f"lander-{name}"
            started.append(Lander(url, origin, data_dir, owner, locked=locked))
        yield started[0], started[1]
    finally:
        for lander in started:
            lander.close()


def run_races(url: str, root: Path, races: int, *, locked: bool = True) -> Tally:
    """`races` races of two landing processes on one fresh origin; the audit's tally.

    `locked=False` takes the merge lock away (each hold passes at once): what git's
    own refusal of a stale push and the landed check before each push hold alone."""
    from app.store import Store

    Store.open(url).close()  # the schema, before two processes open it at once
    tasks = task_ids(races)
    origin = make_origin(root, tasks)
    heads = [head(origin)]
    reported: list[str] = []
    sent: set[str] = set()
    tally = Tally(races=races)
    start = time.perf_counter()
    with landers(url, origin, root, locked=locked) as (a, b):
        for i in range(races):
            first, second = tasks[2 * i], tasks[2 * i + 1]
            if i % 2:
                second = first  # a same-task race
            sent.update((first, second))
            a.send(first)
            b.send(second)
            outcomes = [a.receive(), b.receive()]
            (a0, a1), (b0, b1) = outcomes[0].held, outcomes[1].held
            if a0 < b1 and b0 < a1:
                tally.overlaps += 1
            for o in outcomes:
                if o.complete and o.sha:
                    reported.append(o.sha)
                else:
                    tally.failed.append(f"{o.task}: {o.summary}")
            heads.append(head(origin))
    tally.seconds = time.perf_counter() - start
    found = landed_counts(origin)
    tally.missing = sum(1 for tid in sent if tid not in found)
    tally.double_landings, tally.lost_commits = audit(origin, tasks, heads + reported)
    return tally


def run_alone(url: str, root: Path, landings: int) -> float:
    """The baseline: seconds per landing when one lander lands `landings` tasks one
    after another on a fresh origin (the same process, lock and store, no rival)."""
    from app.store import Store

    Store.open(url).close()
    tasks = [f"1.1.{i}" for i in range(1, landings + 1)]
    origin = make_origin(root, tasks)
    lander = Lander(url, origin, root / "data-alone", "lander-alone")
    try:
        lander.send(tasks[0])  # the mirror's first clone is not a landing's cost
        lander.receive()
        start = time.perf_counter()
        for tid in tasks[1:]:
            lander.send(tid)
            if not lander.receive().complete:
                raise RuntimeError(f"{tid} did not land alone")
        return (time.perf_counter() - start) / max(1, landings - 1)
    finally:
        lander.close()


def head(origin: Path) -> str:
    return git(origin, "rev-parse", "refs/heads/main").strip()


def landed_counts(origin: Path) -> dict[str, int]:
    """Task id -> how many commits on `main` carry its `ODW-Task` trailer."""
    log = git(origin, "log", "--format=%(trailers:key=ODW-Task,valueonly)%x1e", "main")
    per_task: dict[str, int] = {}
    for record in log.split("\x1e"):
        for value in record.split():
            per_task[value] = per_task.get(value, 0) + 1
    return per_task


def audit(origin: Path, tasks: list[str], seen: list[str]) -> tuple[int, int]:
    """(double landings, lost commits) on `main`: tasks whose `ODW-Task` trailer is on
    more than one commit, and commits of `seen` that `main` no longer reaches."""
    per_task = landed_counts(origin)
    doubles = sum(1 for tid in tasks if per_task.get(tid, 0) > 1)
    final = head(origin)
    lost = sum(1 for sha in dict.fromkeys(seen) if not _is_ancestor(origin, sha, final))
    return doubles, lost


def _is_ancestor(origin: Path, sha: str, of: str) -> bool:
    result = subprocess.run(
        ["git", "merge-base", "--is-ancestor", sha, of],
        cwd=origin,
        env=_child_env(),
        capture_output=True,
        check=False,
    )
    return result.returncode == 0


def _serve(url: str, origin: str, data_dir: str, owner: str, kind: str) -> None:
    """The lander: one task id a line on stdin, one JSON outcome a line on stdout."""
    from app.gitops.integrate import integrate
    from app.gitops.lock import LeaseMergeLock
    from app.store import Store

    store = Store.open(url, migrate_schema=False)
    inner = LeaseMergeLock(store.leases, owner, ttl=LOCK_TTL, poll=0.01)
    lock = Timed(inner if kind == "lease" else NoLock())
    print("ready", flush=True)
    for line in sys.stdin:
        task = line.strip()
        report = integrate(
            origin, "main", branch_of(task), task, run_id=RUN_ID, lock=lock,
            data_dir=Path(data_dir), lock_timeout=120,
        )  # fmt: skip
        outcome = {
            "task": task,
            "complete": report.complete,
            "sha": report.sha,
            "summary": report.summary or "",
            "held": lock.last,
        }
        print(json.dumps(outcome), flush=True)
    store.close()


class NoLock:
    """No merge lock at all: every hold passes at once."""

    @contextmanager
    def hold(self, key: str, timeout: float) -> Iterator[None]:
        yield


class Timed:
    """A merge lock that remembers when its last hold began and ended."""

    def __init__(self, inner: MergeLock) -> None:
        self.inner = inner
        self.last = (0.0, 0.0)

    @contextmanager
    def hold(self, key: str, timeout: float) -> Iterator[None]:
        with self.inner.hold(key, timeout):
            began = time.time()
            try:
                yield
            finally:
                self.last = (began, time.time())


if __name__ == "__main__":
    _serve(*sys.argv[1:6])
