"""The operator endpoints: `/metrics` and `/api/*` need the admin token and
do not exist without one; `/healthz` reveals no configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flask import Flask

from app.service_settings import Settings
from app.store import Store
from app.web.admin import authorised
from app.web.app import create_app
from tests.webhooks import oracle
from tests.webhooks.conftest import ADMIN, SECRET

OPERATOR_PATHS = ["/metrics", "/api/deliveries/d1", "/api/anything-added-later"]


def _app(store: Store, tmp_path: Path, **extra: object) -> Flask:
    return create_app(
        Settings(webhook_secret=SECRET, data_dir=tmp_path, **extra),  # type: ignore[arg-type]
        store,
    )


@pytest.mark.parametrize("path", OPERATOR_PATHS, ids=["metrics", "api-delivery", "api-other"])
@pytest.mark.parametrize(
    "header",
    [None, "Bearer wrong-token", f"Basic {ADMIN}", f"Bearer {ADMIN}x", "Bearer "],
    ids=["none", "wrong", "basic-scheme", "longer", "empty"],
)
def test_operator_endpoints_answer_401_without_the_admin_token(
    store: Store, tmp_path: Path, path: str, header: str | None
) -> None:
    client = _app(store, tmp_path, admin_token=ADMIN).test_client()
    resp = client.get(path, headers={"Authorization": header} if header else {})
    assert resp.status_code == 401
    assert resp.headers["WWW-Authenticate"].startswith("Bearer")
    assert "odw_" not in resp.get_data(as_text=True)


@pytest.mark.parametrize("path", OPERATOR_PATHS, ids=["metrics", "api-delivery", "api-other"])
def test_operator_endpoints_are_off_when_no_admin_token_is_set(
    store: Store, tmp_path: Path, path: str
) -> None:
    client = _app(store, tmp_path).test_client()
    assert client.get(path).status_code == 404
    assert client.get(path, headers={"Authorization": "Bearer "}).status_code == 404


def test_operator_endpoints_answer_the_admin_token(store: Store, tmp_path: Path) -> None:
    client = _app(store, tmp_path, admin_token=ADMIN).test_client()
    body, headers = oracle.signed(SECRET, "star", {"action": "created"}, "d1")
    assert client.post("/webhooks", data=body, headers=headers).status_code == 202
    auth = {"Authorization": f"Bearer {ADMIN}"}
    assert client.get("/api/deliveries/d1", headers=auth).get_json()["id"] == "d1"
    assert "odw_inbox_depth" in client.get("/metrics", headers=auth).get_data(as_text=True)


def test_the_admin_token_comparison_is_exact() -> None:
    assert authorised(f"Bearer {ADMIN}", ADMIN)
    assert authorised(f"bearer {ADMIN}", ADMIN)
    for header in (None, "", ADMIN, f"Bearer {ADMIN[:-1]}", f"Token {ADMIN}", "Bearer"):
        assert not authorised(header, ADMIN), header


def test_healthz_reveals_no_configuration(store: Store, tmp_path: Path) -> None:
    settings = {
        "admin_token": "admin-token-value-123",
        "webhook_secret_previous": "previous-secret-456",
        "app_id": 987654,
        "private_key_path": tmp_path / "key-path-marker.pem",
        "github_api_url": "https://ghes.internal.example/api/v3",
    }
    client = _app(store, tmp_path, **settings).test_client()
    resp = client.get("/healthz")
    assert resp.status_code == 200
    assert resp.get_json() == {
        "status": "ok",
        "database": "ok",
        "intake": "ok",
        "worker": "down",
        "github": "not configured",
    }
    text = resp.get_data(as_text=True) + json.dumps(dict(resp.headers))
    for value in [SECRET, str(tmp_path), store.url, *map(str, settings.values())]:
        assert value not in text
    assert "odw" not in resp.headers.get("Server", "").lower()
