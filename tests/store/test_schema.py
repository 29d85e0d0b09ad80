from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import text

from app.store import SchemaOutOfDate, Store, migrate
from app.store.engine import make_engine
from app.store.migrate import current_revision, head_revision
from app.store.schema import metadata
from tests.conftest import RunOdw


def test_migrations_build_exactly_the_declared_schema(db_url: str) -> None:
    store = Store.open(db_url)
    with store.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diff == []
    assert current_revision(store.engine) == head_revision()
    store.upgrade()  # a second upgrade is a no-op
    store.close()


def test_an_unmigrated_database_is_refused_with_the_fix(db_url: str) -> None:
    with pytest.raises(SchemaOutOfDate, match="odw db upgrade"):
        Store.open(db_url, migrate_schema=False)


def test_sqlite_runs_in_wal_mode_with_a_busy_timeout(tmp_path: Path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'deep' / 'odw.sqlite3'}")
    with store.engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() >= 1000
    store.close()


def test_odw_db_upgrade_and_status(run_odw: RunOdw, tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "ODW_DATA_DIR": str(tmp_path / "data")}
    before = run_odw("db", "status", env=env)
    assert before.returncode == 1
    assert "needs `odw db upgrade`" in before.stdout
    up = run_odw("db", "upgrade", env=env)
    assert up.returncode == 0, up.stderr
    assert f"schema at {head_revision()}" in up.stdout
    assert (tmp_path / "data" / "odw.sqlite3").is_file()
    after = run_odw("db", "status", env=env)
    assert after.returncode == 0 and "(current)" in after.stdout


def test_bad_database_url_is_one_line(run_odw: RunOdw, tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "ODW_DATABASE_URL": "mysql://x@127.0.0.1/db"}
    result = run_odw("db", "upgrade", env=env)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1
    assert "unsupported database URL" in result.stderr


def test_the_snapshot_migration_keeps_existing_runs_without_a_snapshot(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        migrate.upgrade(engine, "0001")
        with engine.begin() as conn:
            conn.execute(
                text(
                    "INSERT INTO runs (run_id, version, status, data, updated_at)"
                    " VALUES ('r1', 3, 'running', '{\"key\": 1}', 1.0)"
                )
            )
        migrate.upgrade(engine)
        assert current_revision(engine) == head_revision()
    finally:
        engine.dispose()
    store = Store.open(db_url)
    try:
        assert store.projections.snapshot("r1") is None
        assert [v.run_id for v in store.projections.unsnapshotted(status="running")] == ["r1"]
        store.projections.put_run("r1", 4, "running", {"key": 1}, state="s")
        saved = store.projections.snapshot("r1")
        assert saved is not None and (saved.version, saved.state) == (4, "s")
        assert store.projections.attempts(1, "octo/hello") == []
    finally:
        store.close()
