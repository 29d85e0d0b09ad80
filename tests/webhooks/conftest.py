from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from app.service_settings import Settings
from app.store import Store
from app.web.app import create_app

SECRET = "test-webhook-secret"
PREVIOUS = "previous-webhook-secret"
ADMIN = "test-admin-token"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}")
    yield s
    s.close()


@pytest.fixture
def app(store: Store, tmp_path: Path) -> Flask:
    settings = Settings(
        webhook_secret=SECRET,  # type: ignore[arg-type]
        webhook_secret_previous=PREVIOUS,  # type: ignore[arg-type]
        data_dir=tmp_path,
        admin_token=ADMIN,  # type: ignore[arg-type]
    )
    return create_app(settings, store)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    """A client that holds the admin token (the operator endpoints need it)."""
    c = app.test_client()
    c.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {ADMIN}"
    return c
