"""What several benchmarks share: a generated roadmap, whole-process timing and
the PostgreSQL to measure against.

Not a benchmark itself (`python -m bench` runs only `bench_*.py` modules).
"""

from __future__ import annotations

import compileall
import os
import resource
import statistics
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import app


def generated_roadmap(tasks: int) -> str:
    """Phases of 10 steps of 10 tasks, each waiting for the one before it, a third ticked.

    The first task of every step after phase 1 requires the whole previous phase,
    titles wrap onto a second line and every task has a success bullet, so the
    parser reads every kind of line a real roadmap has.
    """
    lines = []
    per_step, steps = 10, 10
    phases = max(1, tasks // (per_step * steps))
    for p in range(1, phases + 1):
        lines.append(f"## {p}. Phase {p}\n")
        for s in range(1, steps + 1):
            lines.append(f"### {p}.{s}. Step\n")
            for t in range(1, per_step + 1):
                mark = "x" if (p + s + t) % 3 == 0 else " "
                lines.append(f"- [{mark}] {p}.{s}.{t}. Task {p}.{s}.{t} with a wrapped")
                lines.append("  title line.")
                if t > 1:
                    lines.append(f"  - Requires {p}.{s}.{t - 1}.")
                elif p > 1:
                    lines.append(f"  - Requires phase {p - 1}.")
                lines.append("  - Success: it is done.")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Timing:
    """Medians over several runs of one command: wall clock, and CPU time of the process.

    The CPU figure (user + system of the child) hardly moves when other work
    shares the machine; the wall figure is what a user waits for.
    """

    wall: float
    cpu: float

    def ratio(self, baseline: Timing) -> str:
        return f"x{self.wall / baseline.wall:.2f} wall, x{self.cpu / baseline.cpu:.2f} cpu"

    def __str__(self) -> str:
        return f"{self.wall * 1000:.0f} ms (cpu {self.cpu * 1000:.0f} ms)"


def run_timed(
    argv: Sequence[str], *, cwd: str | Path | None = None, env: Mapping[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Run one process to the end, output captured: (result, wall seconds, CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(
        list(argv), capture_output=True, text=True, cwd=cwd, env=env, check=False
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return result, wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def medians(samples: Sequence[tuple[float, float]]) -> Timing:
    """The median wall and the median CPU time of several (wall, cpu) samples."""
    return Timing(
        statistics.median(w for w, _ in samples), statistics.median(c for _, c in samples)
    )


def time_process(argv: Sequence[str], *, runs: int = 7) -> Timing:
    """Run `argv` `runs` times (its exit status does not matter here); the medians."""
    return medians([run_timed(argv)[1:] for _ in range(runs)])


def compile_like_an_install() -> None:
    """Byte-compile the `app` package, as installing odw does.

    Under `PYTHONDONTWRITEBYTECODE` (this machine sets it) an editable install
    would otherwise compile every module it imports from source in every process.
    """
    compileall.compile_dir(Path(app.__file__).parent, quiet=1)


PG_ENV = "ODW_TEST_DATABASE_URL"
PG_DEFAULT = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def postgres_url() -> str | None:
    """`ODW_TEST_DATABASE_URL`, else the local default, when it answers; and
    set in the environment, so helpers that read it find the same one."""
    url = os.environ.get(PG_ENV) or PG_DEFAULT
    try:
        import psycopg

        plain = url.replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(plain, connect_timeout=2):
            pass
    except Exception:
        return None
    os.environ[PG_ENV] = url
    return url


def session_members(session: int) -> Iterator[tuple[int, list[bytes], list[str]]]:
    """The processes of a session (a service started with its own session):
    pid, arguments and the `/proc/<pid>/stat` fields after the name; none
    where there is no /proc."""
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError):
            continue
        if int(fields[3]) == session:
            yield int(entry.name), argv, fields
