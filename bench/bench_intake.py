"""The store pipeline under the webhook edge, without an HTTP framework:
`wrk` as in `bench_webhooks` against `bench.minimal_edge` (one
single-threaded loop: signature, hand-off to the real `odw intake`, answer
after its commit), first with no delivery worker running (the baseline),
then with `odw worker` beside it, on SQLite and on PostgreSQL.

What it shows: the floor under `bench_webhooks`' figures on this machine,
and what the delivery worker's own writes cost the acknowledgements (on
SQLite they share one write lock; the intake's go first).
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from bench.bench_webhooks import (
    drive,
    figures_line,
    free_port,
    load_setup,
    pg_schema,
    server,
)
from bench.support import postgres_url


def show(name: str, f: dict[str, float], base: dict[str, float] | None = None) -> None:
    text = figures_line(name, f, width=34, edge="edge")
    if base is not None:
        text += f"  | x{f['rate'] / base['rate']:.2f} of the throughput"
        text += f", p99 x{f['p99'] / base['p99']:.2f}"
    print(text, flush=True)


def run(
    wrk: str,
    label: str,
    fresh: Callable[[str], AbstractContextManager[dict[str, str]]],
    workdir: Path,
    body: bytes,
) -> None:
    """Each run on a database of its own: no backlog carried over."""
    figures = {}
    for workers in ("0", "2"):
        port = free_port()
        cmd = [sys.executable, "-m", "bench.minimal_edge", str(port)]
        with fresh(workers) as env, server(cmd, port, {**env, "ODW_WORKERS": workers}) as proc:
            figures[workers] = drive(wrk, port, body, workdir, proc.pid)
    show(f"{label}, no worker (baseline)", figures["0"])
    show(f"{label}, with odw worker", figures["2"], figures["0"])


def main() -> None:
    setup = load_setup()
    if setup is None:
        return
    wrk, body, base_env = setup
    print("minimal single-threaded HTTP loop in front of odw intake (not odw serve); same wrk load")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)

        @contextmanager
        def sqlite(name: str) -> Iterator[dict[str, str]]:
            yield {**base_env, "ODW_DATA_DIR": str(workdir / f"data-{name}")}

        run(wrk, "SQLite", sqlite, workdir, body)
        url = postgres_url()
        if url is None:
            print(
                "PostgreSQL                         skipped: no PostgreSQL (ODW_TEST_DATABASE_URL)"
            )
            return

        @contextmanager
        def postgres(_name: str) -> Iterator[dict[str, str]]:
            with pg_schema(url) as scoped:
                yield {**base_env, "ODW_DATABASE_URL": scoped}

        run(wrk, "PostgreSQL", postgres, workdir, body)
