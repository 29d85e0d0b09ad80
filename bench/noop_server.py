"""A no-op Flask endpoint under the same gunicorn settings as `odw serve`:
the baseline the webhook benchmark compares against."""

from __future__ import annotations

import argparse

from flask import Flask

from app.service_settings import Settings
from app.web.server import GunicornApp, gunicorn_options


def create_noop_app() -> Flask:
    app = Flask("noop")

    @app.post("/webhooks")
    def receive() -> tuple[str, int]:
        return "", 202

    @app.get("/healthz")
    def healthz() -> tuple[str, int]:
        return "", 200

    return app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    options = gunicorn_options(Settings(), "127.0.0.1", args.port)
    GunicornApp(create_noop_app, options).run()


if __name__ == "__main__":
    main()
