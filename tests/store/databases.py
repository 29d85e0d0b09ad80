"""Real databases for the store's tests: a fresh SQLite file, or a private
PostgreSQL schema (from ODW_TEST_DATABASE_URL) dropped afterwards."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests import needs

PG_ENV = "ODW_TEST_DATABASE_URL"


def postgres_base_url() -> str | None:
    url = os.environ.get(PG_ENV, "").strip()
    if not url:
        return None
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://") :]
    return url


def require_postgres() -> str:
    url = postgres_base_url()
    if url is None:
        needs.unavailable(needs.POSTGRES)
    return url


@contextmanager
def postgres_schema_url() -> Iterator[str]:
    """A URL whose connections use a new, empty schema; dropped on exit."""
    base = require_postgres()
    schema = f"odw_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f'CREATE SCHEMA "{schema}"'))
    parsed = make_url(base)
    url = parsed.update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with admin.begin() as conn:
            conn.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        admin.dispose()


def sqlite_file_url(directory: Path) -> str:
    return f"sqlite:///{directory / 'odw.sqlite3'}"


def url_quote(url: str) -> str:
    return quote(url, safe="")


@contextmanager
def database_url(kind: str, tmp_path: Path) -> Iterator[str]:
    if kind == "sqlite":
        yield sqlite_file_url(tmp_path)
    else:
        with postgres_schema_url() as url:
            yield url
