"""Several `odw serve` and `odw worker` processes on one PostgreSQL schema, and
a chaos loop that SIGKILLs one at random and starts it again.

Each process has its own ODW_DATA_DIR (git mirrors and logs are per process,
as on separate machines); the database is all they share."""

from __future__ import annotations

import random
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import odw_executable
from tests.service.live import free_port, kill_group, service_env, wait_healthy


@dataclass
class Process:
    """One `odw serve` (with `port`) or `odw worker` (without), restartable."""

    name: str
    data_dir: Path
    env: dict[str, str]
    secret: str
    port: int | None = None
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/webhooks"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "process.log"

    def start(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self.port is None:
            argv = [odw_executable(), "worker"]
        else:
            argv = [odw_executable(), "serve", "--host", "127.0.0.1", "--port", str(self.port)]
        with self.log_path.open("ab") as log:
            since = log.tell()  # the log of this start, not of the one before
            self.proc = subprocess.Popen(
                argv,
                env=service_env(self.data_dir, self.secret, **self.env),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            self._wait_started(self.proc, since)
        except BaseException:
            self.kill()
            raise

    def _wait_started(self, proc: subprocess.Popen[bytes], since: int, timeout: float = 60) -> None:
        if self.port is not None:
            wait_healthy(self.port, proc, timeout)
            return
        deadline = time.monotonic() + timeout
        while b"worker started" not in self.log_path.read_bytes()[since:]:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{self.name} did not start: see {self.log_path}")
            time.sleep(0.1)

    def kill(self, sig: int = signal.SIGKILL) -> None:
        """Signal the whole process group (gunicorn's children, the companions)."""
        if self.proc is not None:
            kill_group(self.proc, sig)
            self.proc = None


@dataclass
class Cluster:
    """`serves` HTTP processes (each also running a delivery worker) and
    `workers` worker processes, all on `database_url`."""

    root: Path
    database_url: str
    secret: str
    env: dict[str, str]
    serves: int = 2
    workers: int = 3
    serve_workers: int = 1  # delivery worker threads beside each `odw serve`
    processes: list[Process] = field(default_factory=list)

    def start(self) -> Cluster:
        shared = {"ODW_DATABASE_URL": self.database_url, **self.env}
        for i in range(self.serves):
            extra = {
                "ODW_WORKERS": str(self.serve_workers),
                "ODW_HTTP_PROCESSES": "1",
                **shared,
            }
            name = f"serve-{i}"
            self.processes.append(
                Process(name, self.root / name, extra, self.secret, port=free_port())
            )
        for i in range(self.workers):
            name = f"worker-{i}"
            self.processes.append(
                Process(name, self.root / name, {"ODW_WORKERS": "2", **shared}, self.secret)
            )
        for process in self.processes:
            process.start()
        return self

    @property
    def receivers(self) -> list[str]:
        return [p.url for p in self.processes if p.port is not None]

    def ensure_running(self) -> None:
        """Start any process the chaos loop left down."""
        for process in self.processes:
            if process.proc is None or process.proc.poll() is not None:
                process.proc = None
                process.start()

    def stop(self) -> None:
        for process in self.processes:
            process.kill(signal.SIGTERM)

    def logs(self, tail: int = 2000) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.log_path.read_text(errors='replace')[-tail:]}"
            for p in self.processes
            if p.log_path.exists()
        )


class Chaos:
    """Every `every` seconds (jittered), SIGKILL a random process of `cluster`
    and start it again; `kills` counts them. Restarting in this thread keeps
    at most one process down at a time, as a supervisor would."""

    def __init__(self, cluster: Cluster, every: float, seed: int = 0) -> None:
        self.cluster = cluster
        self.every = every
        self.kills = 0
        self.errors: list[str] = []
        self._random = random.Random(seed)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="soak-chaos", daemon=True)

    def start(self) -> Chaos:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=120)

    def _loop(self) -> None:
        while not self._stop.wait(self.every * self._random.uniform(0.5, 1.5)):
            victim = self._random.choice(self.cluster.processes)
            victim.kill(signal.SIGKILL)
            self.kills += 1
            try:
                victim.start()
            except Exception as exc:
                self.errors.append(f"{victim.name}: {exc}")
