from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.store import Store
from tests.store.databases import database_url
from tests.support import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["sqlite", "postgres"], ids=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with database_url(request.param, tmp_path) as url:
        yield url


@pytest.fixture
def store(db_url: str, clock: FakeClock) -> Iterator[Store]:
    s = Store.open(db_url, clock=clock, alive=lambda _host, _pid: False)
    yield s
    s.close()
