"""Flask app factory: the webhook endpoint, health, metrics and delivery status."""

from app.web.app import create_app

__all__ = ["create_app"]
