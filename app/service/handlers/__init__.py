"""Feature handlers, one router per module, combined by `build_router`."""

from __future__ import annotations

from app.service.handlers import activity, installations
from webhooks.router import Router


def build_router() -> Router:
    return Router(installations.router, activity.router)
