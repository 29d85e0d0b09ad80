"""GitHub's content-creation limit (80 a minute, 500 an hour) per installation,
on an injected clock."""

from __future__ import annotations

from app.github.budget import ContentBudget
from tests.github.conftest import RecordingSleeper
from tests.support import FakeClock


def test_the_81st_create_in_a_minute_waits_for_the_oldest_to_age_out() -> None:
    clock = FakeClock(t=1_000.0)
    sleeper = RecordingSleeper(clock)
    budget = ContentBudget(clock, sleeper)
    for _ in range(80):
        budget.acquire(1)
        clock.advance(0.5)
    assert sleeper.waits == []
    budget.acquire(1)  # 40 s after the first: waits the remaining 20 s
    assert sleeper.waits == [20.0]
    budget.acquire(2)  # another installation has its own budget
    assert sleeper.waits == [20.0]


def test_the_501st_create_in_an_hour_waits_for_the_hourly_window() -> None:
    clock = FakeClock(t=0.0)
    sleeper = RecordingSleeper(clock)
    budget = ContentBudget(clock, sleeper)
    for _ in range(500):
        budget.acquire(7)
        clock.advance(1.0)  # 60 a minute: never the per-minute limit
    assert sleeper.waits == []
    budget.acquire(7)
    assert sum(sleeper.waits) == 3600 - 500
