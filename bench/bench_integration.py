"""Squash integration throughput on real git: landings/min, push attempts per landing,
and the cost of landing against the bare git commands doing the same work.

Two comparisons: `integrate()` in process against the same git calls from
Python, and (issue 12, goal at most 1.5x) 12 branches landed one after another
by whole `odw integrate --keep-branch` processes against a shell script doing
fetch, rebase, tick, `switch -C`, `merge --squash`, commit and push on an
identical copy: a clone made when the origin held only the base, as odw's
mirror starts, so both fetch each task branch as they land it. Both
comparisons take their two sides in turn, one landing each, so that both meet
the same load on a shared machine; the `app` package is byte-compiled first,
as installing it does (a `PYTHONDONTWRITEBYTECODE` environment would otherwise
make every process compile it from source).

Default size: 20 ready task branches per scenario (a few seconds each on 2 cores).
Set ODW_BENCH_TASKS to change it.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from app.core.roadmap_edit import tick
from app.gitops.integrate import integrate
from app.gitops.lock import InProcessMergeLock
from bench.support import Timing, compile_like_an_install, medians, run_timed
from tests.conftest import odw_executable
from tests.gitops.origins import Origin
from tests.support import GIT_ENV, git

WORKERS = 4


def _ids(n: int) -> list[str]:
    return [f"1.1.{i}" for i in range(1, n + 1)]


def _prepare(root: Path, n: int) -> Origin:
    origin = Origin.create(root, _ids(n))
    for tid in _ids(n):
        origin.task_branch(tid)
    return origin


def _prepare_with_clone(root: Path, n: int) -> tuple[Origin, Path]:
    """An origin with n task branches, and a clone made before they were pushed.

    The clone starts where odw's mirror does, with the base alone, so each
    landing's fetch brings its task branch in both: the same work on identical
    copies (a clone made after the pushes would hold every branch already and
    fetch nothing while odw fetches the branch).
    """
    origin = Origin.create(root, _ids(n))
    work = origin.clone()
    for tid in _ids(n):
        origin.task_branch(tid)
    return origin, work


def _scenario(root: Path, n: int, *, external: bool) -> tuple[float, float, int, int]:
    """Land n branches from WORKERS threads; returns (landings/min, attempts/landing, ext, ok)."""
    origin = _prepare(root, n)
    lock = InProcessMergeLock()
    queue = list(_ids(n))
    guard = threading.Lock()
    attempts: list[int] = []
    landed = 0
    stop = threading.Event()
    pushed_external = 0

    def pusher() -> None:
        nonlocal pushed_external
        work = origin.clone()
        k = 0
        while not stop.is_set():
            k += 1
            if origin.external_commit(work, f"external/{k}.txt", f"{k}\n"):
                pushed_external += 1
            stop.wait(0.2)

    def worker() -> None:
        nonlocal landed
        while True:
            with guard:
                if not queue:
                    return
                tid = queue.pop(0)
            report = integrate(
                str(origin.path), "main", "roadmap-" + tid.replace(".", "-"), tid,
                run_id="bench", lock=lock, data_dir=root / "data", max_attempts=50,
            )  # fmt: skip
            with guard:
                attempts.append(report.attempts)
                landed += int(report.complete)

    ext = threading.Thread(target=pusher)
    if external:
        ext.start()
    start = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(WORKERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    stop.set()
    if external:
        ext.join()
    return landed / elapsed * 60, statistics.fmean(attempts), pushed_external, landed


def _bare_sequence(origin: Origin, work: Path, tid: str) -> None:
    """The same landing as plain git commands in a plain clone, no checks, no lock."""
    branch = "roadmap-" + tid.replace(".", "-")
    git(work, "fetch", "-q", "origin", "main", branch)
    git(work, "switch", "-q", "--discard-changes", "-C", branch, f"origin/{branch}")
    git(work, "rebase", "-q", "origin/main")
    roadmap = work / "docs" / "roadmap.md"
    roadmap.write_text(tick(roadmap.read_text(), tid))
    git(work, "commit", "-q", "-m", f"Mark {tid} done", "--", "docs/roadmap.md")
    git(work, "switch", "-q", "--discard-changes", "-C", "integrate-x", "origin/main")
    git(work, "merge", "--squash", "-q", branch)
    git(work, "commit", "-q", "-m", f"{tid}\n\nODW-Task: {tid}")
    git(work, "push", "-q", "origin", "HEAD:main")


def _per_landing(root: Path, n: int) -> tuple[float, float]:
    """Median seconds per sequential landing: integrate() vs the bare git sequence."""
    odw_origin = _prepare(root / "odw", n)
    bare_origin, work = _prepare_with_clone(root / "bare", n)
    lock = InProcessMergeLock()
    odw, bare = [], []
    for tid in _ids(n):
        start = time.perf_counter()
        report = integrate(
            str(odw_origin.path), "main", "roadmap-" + tid.replace(".", "-"), tid,
            run_id="bench", lock=lock, data_dir=root / "odw-data",
        )  # fmt: skip
        odw.append(time.perf_counter() - start)
        assert report.complete, report.summary
        start = time.perf_counter()
        _bare_sequence(bare_origin, work, tid)
        bare.append(time.perf_counter() - start)
    return statistics.median(odw), statistics.median(bare)


# One landing as a maintainer would script it by hand, in a plain clone.
BARE_SCRIPT = r"""set -e
tid=$1; branch=roadmap-$(echo "$tid" | tr . -)
git fetch -q origin main "$branch"
git switch -q --discard-changes -C "$branch" "origin/$branch"
git rebase -q origin/main
sed -i "s/^- \[ \] $tid\. /- [x] $tid. /" docs/roadmap.md
git commit -q -m "Mark $tid done" -- docs/roadmap.md
git switch -q --discard-changes -C integrate-x origin/main
git merge --squash -q "$branch" >/dev/null
git commit -q -m "$tid" -m "ODW-Task: $tid"
git push -q origin HEAD:main
"""


def _whole_process(root: Path, n: int) -> tuple[Timing, Timing]:
    """Medians per landing: `odw integrate` processes vs a shell script."""
    env = {**os.environ, **GIT_ENV}
    compile_like_an_install()
    odw_origin = _prepare(root / "odw", n)
    _, work = _prepare_with_clone(root / "bare", n)
    script = root / "land.sh"
    script.write_text(BARE_SCRIPT)
    odw, bare = [], []
    for tid in _ids(n):
        proc, wall, cpu = run_timed(
            [odw_executable(), "integrate", "--repo", str(odw_origin.path), "--base", "main",
             "--branch", "roadmap-" + tid.replace(".", "-"), "--task", tid, "--keep-branch",
             "--data-dir", str(root / "odw-data")],
            env=env,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        odw.append((wall, cpu))
        proc, wall, cpu = run_timed(["sh", str(script), tid], cwd=work, env=env)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        bare.append((wall, cpu))
    return medians(odw), medians(bare)


def main() -> None:
    n = int(os.environ.get("ODW_BENCH_TASKS", "20"))
    with tempfile.TemporaryDirectory(prefix="odw-bench-") as tmp:
        root = Path(tmp)
        for external in (False, True):
            rate, per, ext, ok = _scenario(root / f"s{int(external)}", n, external=external)
            label = "with external pusher" if external else "no external pusher  "
            print(
                f"integration {label}: {ok}/{n} landed, {rate:.0f} landings/min, "
                f"{per:.2f} push attempts/landing ({WORKERS} workers"
                + (f", {ext} external commits)" if external else ")")
            )
        odw, bare = _per_landing(root / "seq", n)
        print(
            f"time per landing (median of {n}): integrate() {odw * 1000:.0f} ms, "
            f"bare git sequence {bare * 1000:.0f} ms, overhead x{odw / bare:.2f}"
        )
        whole = int(os.environ.get("ODW_BENCH_SEQUENTIAL", "12"))
        odw_t, bare_t = _whole_process(root / "whole", whole)
        print(
            f"whole process per landing (median of {whole}): odw integrate {odw_t}, "
            f"shell script {bare_t}: {odw_t.ratio(bare_t)} (goal <= 1.5)"
        )


if __name__ == "__main__":
    main()
