"""Running a WSGI app under gunicorn from inside `odw`, with ODW's settings.

The same options serve the real app and the benchmark's no-op baseline, so
the two are compared under identical server settings. Beside the HTTP
workers the gunicorn master keeps companion processes alive: the intake
(`odw intake`, which stores every HTTP process's deliveries) and the
delivery workers (`odw worker`), so neither competes with request threads
for one interpreter.
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gunicorn.app.base import BaseApplication
from gunicorn.arbiter import Arbiter
from gunicorn.glogging import Logger

from app.service_settings import Settings
from app.web.whole_requests import worker_class

log = logging.getLogger("odw.serve")

# Request threads mostly wait for the intake's shared commit, not for the
# CPU; enough of them per core lets a burst fill one commit instead of
# queueing for it.
THREADS_PER_CORE = 8

# `odw serve` stops within STOP_SECONDS of SIGTERM, as container platforms
# expect before their SIGKILL: the HTTP processes get HTTP_STOP_SECONDS to
# answer what they hold (a request still being read is dropped unanswered, so
# never acknowledged), then the companions COMPANION_STOP_SECONDS. What a
# delivery worker had not finished stays in the inbox for the next start.
STOP_SECONDS = 5.0
HTTP_STOP_SECONDS = 3  # gunicorn takes whole seconds
COMPANION_STOP_SECONDS = 1.5


def http_shape(settings: Settings, cores: int | None = None) -> tuple[int, int]:
    """(processes, threads per process) for gunicorn: one process per two
    cores, leaving the rest to the intake, the delivery workers and the
    database (one process holds about one core: its interpreter lock), and
    threads from the cores per process. The intake process commits for all
    of them, so the shape is the same on SQLite and PostgreSQL."""
    cores = cores or os.cpu_count() or 1
    processes = settings.http_processes or max(1, cores // 2)
    per_process = max(1, cores // processes)
    threads = settings.http_threads or min(64, THREADS_PER_CORE * per_process)
    return processes, threads


class ServiceLogger(Logger):  # type: ignore[misc]
    """gunicorn's logger, writing its access line only at DEBUG.

    A webhook receiver's every request is a delivery the inbox already
    records; a line per request under one handler lock, built and written by
    the request threads, was the largest cost left on the request path (and
    what made its tail).
    """

    def access(self, resp: Any, req: Any, environ: Any, request_time: Any) -> None:
        if self.access_log.isEnabledFor(logging.INFO):
            super().access(resp, req, environ, request_time)


def gunicorn_options(settings: Settings, host: str, port: int) -> dict[str, Any]:
    processes, threads = http_shape(settings)
    level = settings.log_level.upper()
    return {
        "bind": f"{host}:{port}",
        "workers": processes,
        "worker_class": worker_class(
            settings.http_read_timeout, settings.http_header_timeout, settings.inflight_bytes
        ),
        "threads": threads,
        "timeout": 30,
        "graceful_timeout": HTTP_STOP_SECONDS,
        "keepalive": 5,
        "accesslog": None,
        "errorlog": "-",
        "logger_class": ServiceLogger,
        "loglevel": settings.log_level.lower(),
        "proc_name": "odw",
        # gunicorn 23+ opens a control socket at a fixed path; several
        # instances on one host would fight over it.
        "control_socket_disable": True,
        "logconfig_dict": {
            "version": 1,
            "disable_existing_loggers": False,
            "formatters": {"json": {"()": "app.logs.JsonFormatter"}},
            "handlers": {
                "console": {
                    "class": "logging.StreamHandler",
                    "formatter": "json",
                    "stream": "ext://sys.stderr",
                },
            },
            "root": {"level": settings.log_level.upper(), "handlers": []},
            "loggers": {
                "gunicorn.error": {
                    "level": settings.log_level.upper(),
                    "handlers": ["console"],
                    "propagate": False,
                    "qualname": "gunicorn.error",
                },
                "gunicorn.access": {
                    "level": "DEBUG" if level == "DEBUG" else "WARNING",
                    "handlers": ["console"],
                    "propagate": False,
                    "qualname": "gunicorn.access",
                },
            },
        },
    }


class GunicornApp(BaseApplication):  # type: ignore[misc]
    """gunicorn's documented custom-application hook: options in, WSGI app out.
    `factory` runs in each worker after the fork; `hooks` are gunicorn server hooks."""

    def __init__(
        self,
        factory: Callable[[], Any],
        options: dict[str, Any],
        hooks: dict[str, Callable[..., Any]] | None = None,
    ) -> None:
        self.factory = factory
        self.options = {**options, **(hooks or {})}
        super().__init__()

    def load_config(self) -> None:
        for key, value in self.options.items():
            if key in self.cfg.settings and value is not None:
                self.cfg.set(key, value)

    def load(self) -> Any:
        return self.factory()

    def run(self, companions: Sequence[Companion] = ()) -> None:
        """Serve until stopped, keeping `companions` running beside the HTTP
        workers (each restarted if it exits)."""
        CompanionArbiter(self, companions).run()


@dataclass
class Companion:
    """A process the master keeps alive: `argv`, with `pass_fds` inherited.

    Its stdin is a pipe from the master, closed when the master stops it (or
    dies): a companion that must outlive the HTTP processes, as the intake
    must, stops at that end of file and not at a SIGTERM sent to the whole
    process group (`kill -TERM -PGID`, systemd's control-group stop)."""

    name: str
    argv: list[str]
    pass_fds: tuple[int, ...] = ()
    proc: subprocess.Popen[bytes] | None = None
    restarts: int = 0
    due: float = 0.0


class CompanionArbiter(Arbiter):  # type: ignore[misc]
    """gunicorn's master, also keeping companion processes alive: started
    before the HTTP workers, checked each time the master tends its workers
    (about once a second)."""

    RESTART_DELAYS = (1.0, 2.0, 5.0, 10.0, 30.0)

    def __init__(self, app: Any, companions: Sequence[Companion]) -> None:
        super().__init__(app)
        self.companions = list(companions)

    def start(self) -> None:
        super().start()
        self._tend_companions()

    def manage_workers(self) -> None:
        super().manage_workers()
        self._tend_companions()

    def _tend_companions(self) -> None:
        now = time.monotonic()
        for c in self.companions:
            if c.proc is not None and c.proc.poll() is None:
                continue
            if c.proc is not None:
                # The master reaps every child, so the exit status may be lost.
                log.error("%s process %s exited; restarting", c.name, c.proc.pid)
                # The hook an HTTP worker's exit runs (it reads only `.pid`).
                self.cfg.child_exit(self, c.proc)
                if c.proc.stdin is not None:
                    c.proc.stdin.close()
                c.proc = None
                c.due = now + self.RESTART_DELAYS[min(c.restarts, len(self.RESTART_DELAYS) - 1)]
                c.restarts += 1
            if now >= c.due:
                c.proc = subprocess.Popen(c.argv, pass_fds=c.pass_fds, stdin=subprocess.PIPE)
                log.info("%s process %s started", c.name, c.proc.pid)

    def stop(self, graceful: bool = True) -> None:
        # The HTTP workers finish first: their last requests still need the intake.
        super().stop(graceful)
        companions, self.companions = self.companions, []
        for c in companions:
            if c.proc is not None and c.proc.poll() is None:
                if c.proc.stdin is not None:
                    c.proc.stdin.close()
                c.proc.terminate()
        deadline = time.monotonic() + COMPANION_STOP_SECONDS
        for c in companions:
            if c.proc is None:
                continue
            try:
                c.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.warning("%s process %s did not stop in time; killed", c.name, c.proc.pid)
                c.proc.kill()
            except ChildProcessError:
                pass
