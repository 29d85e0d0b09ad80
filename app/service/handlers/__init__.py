"""Feature handlers, one router per module, combined by `build_router`."""

from __future__ import annotations

from app.service.handlers import activity, commands, installations, landing, runs
from webhooks.router import Router

# Feature routers, in order. A feature adds its module's `router` here
# (slash-commands and check-run buttons: `commands.router`).
ROUTERS: list[Router] = [
    installations.router,
    activity.router,
    runs.router,
    commands.router,
    landing.router,
]


def build_router() -> Router:
    return Router(*ROUTERS)
