from __future__ import annotations

import pytest

from app.store import Store


@pytest.fixture
def store(any_store: Store) -> Store:
    """The intake's tests run on each database."""
    return any_store
