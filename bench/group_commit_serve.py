"""`odw serve` with the in-process group commit in place of the intake
process, for `bench_webhooks` only: the same settings, gunicorn shape and
delivery worker, but each HTTP process stores its deliveries through
`GroupCommit` (`create_app`'s default), a writer thread beside its request
threads. Not a way odw serves."""

from __future__ import annotations

import argparse
from typing import Any

from app.cli.serve_cmd import open_store
from app.logs import configure_logging
from app.python_child import odw_argv
from app.service_settings import load_settings
from app.store import Store
from app.web.app import create_app
from app.web.server import Companion, GunicornApp, gunicorn_options


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    settings = load_settings()
    configure_logging(settings.log_level)
    open_store(settings).close()  # migrate once in the master, as `odw serve` does

    def factory() -> Any:
        return create_app(settings, Store(settings.database))

    def post_worker_init(_worker: Any) -> None:
        configure_logging(settings.log_level)

    companions = []
    if settings.workers > 0:
        argv = odw_argv("worker", "--threads", str(settings.workers))
        companions.append(Companion("delivery worker", argv))
    options = gunicorn_options(settings, "127.0.0.1", args.port)
    GunicornApp(factory, options, {"post_worker_init": post_worker_init}).run(companions)


if __name__ == "__main__":
    main()
