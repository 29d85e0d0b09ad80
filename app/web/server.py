"""Running a WSGI app under gunicorn from inside `odw`, with ODW's settings.

The same options serve the real app and the benchmark's no-op baseline, so
the two are compared under identical server settings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gunicorn.app.base import BaseApplication

from app.settings import Settings


def gunicorn_options(settings: Settings, host: str, port: int) -> dict[str, Any]:
    return {
        "bind": f"{host}:{port}",
        "workers": settings.http_processes,
        "worker_class": "gthread",
        "threads": settings.http_threads,
        "timeout": 30,
        "graceful_timeout": 30,
        "keepalive": 5,
        "accesslog": None,
        "errorlog": "-",
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
                    "level": settings.log_level.upper(),
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
