"""One performer per outbox kind, wired in one table (`table.py`)."""
