"""Running a WSGI app under gunicorn from inside `odw`, with ODW's settings.

The same options serve the real app and the benchmark's no-op baseline, so
the two are compared under identical server settings. The delivery workers
run in a process of their own (`odw worker`), started and restarted by the
gunicorn master, so they never compete with request threads for one
interpreter.
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from typing import Any

from gunicorn.app.base import BaseApplication
from gunicorn.arbiter import Arbiter
from gunicorn.glogging import Logger

from app.settings import Settings
from app.web.whole_requests import worker_class

log = logging.getLogger("odw.serve")

# Request threads mostly wait for the shared commit, not for the CPU; enough
# of them per core lets a burst fill one commit instead of queueing for it.
THREADS_PER_CORE = 8


def http_shape(settings: Settings, cores: int | None = None) -> tuple[int, int]:
    """(processes, threads per process) for gunicorn. One process on SQLite
    (one writer per file commits best, and group commit needs the requests in
    one place); on PostgreSQL one per two cores, leaving the rest to the
    delivery workers and the database. Threads from the cores per process."""
    cores = cores or os.cpu_count() or 1
    sqlite = settings.database.startswith("sqlite")
    processes = settings.http_processes or (1 if sqlite else max(1, cores // 2))
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
        "worker_class": worker_class(settings.http_read_timeout),
        "threads": threads,
        "timeout": 30,
        "graceful_timeout": 30,
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

    def run(self, companion: Sequence[str] | None = None) -> None:
        """Serve until stopped; `companion`, when given, is a command the
        master keeps running beside the HTTP workers (restarted if it exits)."""
        CompanionArbiter(self, companion).run()


class CompanionArbiter(Arbiter):  # type: ignore[misc]
    """gunicorn's master, also keeping one companion process alive: checked
    each time the master tends its workers (about once a second)."""

    RESTART_DELAYS = (1.0, 2.0, 5.0, 10.0, 30.0)

    def __init__(self, app: Any, companion: Sequence[str] | None) -> None:
        super().__init__(app)
        self.companion = list(companion) if companion else None
        self.companion_proc: subprocess.Popen[bytes] | None = None
        self.companion_restarts = 0
        self.companion_due = 0.0

    def manage_workers(self) -> None:
        super().manage_workers()
        if self.companion is None:
            return
        proc = self.companion_proc
        if proc is not None and proc.poll() is None:
            return
        now = time.monotonic()
        if proc is not None:
            # The master reaps every child, so the exit status may be lost.
            log.error("delivery worker process %s exited; restarting", proc.pid)
            self.companion_proc = None
            delay = self.RESTART_DELAYS[min(self.companion_restarts, 4)]
            self.companion_restarts += 1
            self.companion_due = now + delay
        if now >= self.companion_due:
            self.companion_proc = subprocess.Popen(self.companion)
            log.info("delivery worker process %s started", self.companion_proc.pid)

    def stop(self, graceful: bool = True) -> None:
        super().stop(graceful)
        proc, self.companion_proc = self.companion_proc, None
        self.companion = None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=self.cfg.graceful_timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
        except ChildProcessError:
            pass
