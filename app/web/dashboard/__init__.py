"""The dashboard: server-rendered, read-only pages about installations, runs and
deliveries, for the holder of the admin token (`access.py`).

`pages.py` turns store rows and a run's state into page models, `graph.py`
lays a run's task graph out for SVG, `routes.py` reads the store and renders
the Jinja templates (autoescaped; no script on any page).
"""

from __future__ import annotations

from flask import Flask

from app.store import Store
from app.web.dashboard.routes import blueprint


def register(app: Flask, store: Store, token: str | None) -> None:
    """Serve the dashboard under `/dashboard`; without an admin token it does not exist (404)."""
    if token is not None:
        app.register_blueprint(blueprint(store, token))
