"""run state snapshots and the live attempts index

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-03 12:40:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Existing runs get no snapshot: the App folds such a run once and writes it.
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("state", sa.Text(), nullable=True))
        batch_op.add_column(sa.Column("state_version", sa.Integer(), nullable=True))

    op.create_table(
        "live_attempts",
        sa.Column("key", sa.String(length=300), nullable=False),
        sa.Column("run_id", sa.String(length=200), nullable=False),
        sa.Column("installation_id", sa.BigInteger(), nullable=False),
        sa.Column("repository", sa.String(length=300), nullable=False),
        sa.Column("task", sa.String(length=200), nullable=False),
        sa.Column("stage", sa.String(length=100), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("lane", sa.String(length=100), nullable=False),
        sa.Column("token", sa.String(length=200), nullable=False),
        sa.Column("branch", sa.String(length=300), nullable=False),
        sa.PrimaryKeyConstraint("key"),
    )
    with op.batch_alter_table("live_attempts", schema=None) as batch_op:
        batch_op.create_index(
            "ix_live_attempts_repository", ["installation_id", "repository"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_live_attempts_run_id"), ["run_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("live_attempts", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_live_attempts_run_id"))
        batch_op.drop_index("ix_live_attempts_repository")

    op.drop_table("live_attempts")
    with op.batch_alter_table("runs", schema=None) as batch_op:
        batch_op.drop_column("state_version")
        batch_op.drop_column("state")
