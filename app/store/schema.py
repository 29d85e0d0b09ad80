"""Table definitions shared by the store and its alembic migrations.

Times are epoch seconds (float) taken from the store's injected clock, so
tests can move time and SQLite and PostgreSQL compare them the same way.
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Column,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)

metadata = MetaData()

# Inbox: one row per GitHub delivery, keyed by X-GitHub-Delivery.
deliveries = Table(
    "deliveries",
    metadata,
    Column("id", String(100), primary_key=True),
    Column("event", String(100), nullable=False),
    Column("action", String(100)),
    Column("installation_id", BigInteger),
    Column("body", LargeBinary, nullable=False),
    Column("received_at", Float, nullable=False),
    # received | processing | processed | ignored | failed
    Column("status", String(20), nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("next_attempt_at", Float, nullable=False),
    Column("lease_owner", String(200)),
    Column("lease_expires_at", Float),
    Column("error", Text),
    Column("finished_at", Float),
    Column("processed_by", String(200)),
)
Index("ix_deliveries_claim", deliveries.c.status, deliveries.c.next_attempt_at)

# Per-run append-only event log; (run_id, seq) is the optimistic-concurrency fence.
run_events = Table(
    "run_events",
    metadata,
    Column("run_id", String(200), primary_key=True),
    Column("seq", Integer, primary_key=True, autoincrement=False),
    Column("type", String(200), nullable=False),
    Column("version", Integer),
    Column("data", Text, nullable=False),
    Column("recorded_at", Float, nullable=False),
)

# A run's view; `state` is a snapshot of the core's run state as of log version
# `state_version` (the App's), so an input folds only the events after it.
runs = Table(
    "runs",
    metadata,
    Column("run_id", String(200), primary_key=True),
    Column("version", Integer, nullable=False),
    Column("status", String(50), nullable=False),
    Column("data", Text, nullable=False),
    Column("updated_at", Float, nullable=False),
    Column("state", Text),
    Column("state_version", Integer),
)

# The App's live stage attempts, rewritten with each snapshot of their run; `key`
# is the attempt's dispatch key. A completed workflow run finds the attempts of
# its repository here, in one indexed read, without folding any run.
live_attempts = Table(
    "live_attempts",
    metadata,
    Column("key", String(300), primary_key=True),
    Column("run_id", String(200), nullable=False, index=True),
    Column("installation_id", BigInteger, nullable=False),
    Column("repository", String(300), nullable=False),
    Column("task", String(200), nullable=False),
    Column("stage", String(100), nullable=False),
    Column("attempt", Integer, nullable=False),
    Column("lane", String(100), nullable=False),
    Column("token", String(200), nullable=False),
    Column("branch", String(300), nullable=False),
)
Index("ix_live_attempts_repository", live_attempts.c.installation_id, live_attempts.c.repository)

run_tasks = Table(
    "run_tasks",
    metadata,
    Column("run_id", String(200), primary_key=True),
    Column("task_id", String(200), primary_key=True),
    Column("status", String(50), nullable=False),
    Column("data", Text, nullable=False),
    Column("updated_at", Float, nullable=False),
)

# Outbox: effects to perform, each once, identified by an idempotency key.
outbox = Table(
    "outbox",
    metadata,
    Column("key", String(300), primary_key=True),
    Column("kind", String(100), nullable=False),
    Column("run_id", String(200)),
    Column("payload", Text, nullable=False),
    # pending | in_flight | done | dead
    Column("status", String(20), nullable=False),
    Column("attempts", Integer, nullable=False, default=0),
    Column("next_attempt_at", Float, nullable=False),
    Column("lease_owner", String(200)),
    Column("lease_expires_at", Float),
    Column("last_error", Text),
    Column("result", Text),
    Column("created_at", Float, nullable=False),
    Column("updated_at", Float, nullable=False),
)
Index("ix_outbox_claim", outbox.c.status, outbox.c.next_attempt_at)

leases = Table(
    "leases",
    metadata,
    Column("name", String(300), primary_key=True),
    Column("owner", String(200), nullable=False),
    Column("host", String(200), nullable=False),
    Column("pid", Integer, nullable=False),
    Column("acquired_at", Float, nullable=False),
    Column("heartbeat_at", Float, nullable=False),
    Column("expires_at", Float, nullable=False),
)

# One row per service process that acts on deliveries, renewed every few seconds:
# how `odw app run` knows a service is reading this database.
service_heartbeats = Table(
    "service_heartbeats",
    metadata,
    Column("process", String(300), primary_key=True),
    Column("host", String(200), nullable=False),
    Column("pid", Integer, nullable=False),
    # 1 when the process runs the App host (it performs what `odw app run` asks).
    Column("acts_on_runs", Integer, nullable=False),
    Column("started_at", Float, nullable=False),
    Column("seen_at", Float, nullable=False),
)

installations = Table(
    "installations",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False),
    Column("account_login", String(200)),
    Column("account_type", String(50)),
    Column("target_type", String(50)),
    Column("repository_selection", String(20)),
    Column("permissions", Text, nullable=False, default="{}"),
    Column("events", Text, nullable=False, default="[]"),
    Column("suspended_at", Float),
    Column("deleted_at", Float),
    Column("updated_at", Float, nullable=False),
)

repositories = Table(
    "repositories",
    metadata,
    Column("id", BigInteger, primary_key=True, autoincrement=False),
    Column("installation_id", BigInteger, nullable=False, index=True),
    Column("full_name", String(300), nullable=False),
    Column("private", Integer),
    Column("updated_at", Float, nullable=False),
)

# Typed GitHub events recorded by the worker, for the handlers that act on them.
github_events = Table(
    "github_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("delivery_id", String(100), nullable=False, index=True),
    Column("event", String(100), nullable=False),
    Column("action", String(100)),
    Column("installation_id", BigInteger),
    Column("repository", String(300)),
    Column("subject", String(500)),
    Column("data", Text, nullable=False),
    Column("recorded_at", Float, nullable=False),
)
