"""Alembic environment and revisions for the ODW store."""
