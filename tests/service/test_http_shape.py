"""How many HTTP processes and threads `odw serve` runs: from the cores,
the same on both databases (the intake process commits for all of them),
and whatever the operator sets instead."""

from __future__ import annotations

import pytest

from app.service_settings import Settings
from app.web.server import http_shape

SQLITE = "sqlite:///var/odw.sqlite3"
POSTGRES = "postgresql+psycopg://odw@db/odw"


@pytest.mark.parametrize(
    ("cores", "shape"),
    [(1, (1, 8)), (2, (1, 16)), (4, (2, 16)), (8, (4, 16)), (64, (32, 16))],
    ids=["1-core", "2-cores", "4-cores", "8-cores", "64-cores"],
)
@pytest.mark.parametrize("url", [SQLITE, POSTGRES], ids=["sqlite", "postgres"])
def test_one_process_per_two_cores_and_eight_threads_per_core(
    cores: int, shape: tuple[int, int], url: str
) -> None:
    assert http_shape(Settings(database_url=url), cores=cores) == shape  # type: ignore[arg-type]


def test_the_operator_settings_win() -> None:
    settings = Settings(http_processes=3, http_threads=5)  # type: ignore[arg-type]
    assert http_shape(settings, cores=16) == (3, 5)
    assert http_shape(Settings(http_processes=3), cores=12) == (3, 32)  # type: ignore[arg-type]
