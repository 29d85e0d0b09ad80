"""The short soak: the App as several processes on PostgreSQL, killed at random
while roadmaps run, lands every task once and repeats no effect."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.soak.run import Size, soak
from tests.store.databases import postgres_schema_url

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

SHORT = Size(serves=2, workers=2, repos=3, tasks=2, kill_every=2.0, bound=240)


def test_a_cluster_under_sigkill_lands_every_task_once(tmp_path: Path) -> None:
    with postgres_schema_url() as url:
        outcome = soak(tmp_path, url, SHORT)
    a = outcome.audit
    detail = f"{outcome.summary()}; {outcome.notes}"
    assert a.missing == [], detail
    assert a.landed_twice == [], detail
    assert a.effects_twice == [], detail
    assert a.lost == [], detail
    assert sum(a.landed.values()) == SHORT.repos * SHORT.tasks, detail
    assert outcome.kills >= 1, detail
