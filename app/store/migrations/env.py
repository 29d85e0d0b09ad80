"""Alembic environment: runs against the engine the store hands over."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Engine

from app.store.engine import make_engine
from app.store.schema import metadata

config = context.config
engine: Engine | None = config.attributes.get("engine")
if engine is None:
    # Plain `alembic` invocations (e.g. autogenerate) give a URL instead.
    url = config.get_main_option("sqlalchemy.url")
    if not url:
        raise SystemExit("no engine and no sqlalchemy.url for alembic")
    engine = make_engine(url)

with engine.connect() as connection:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()
    connection.commit()
