"""`/metrics`: Prometheus text from prometheus_client, two sources in one page.

The counters and histograms of `app.metrics`, added up over every process of
this `odw serve` (multiprocess mode) or of this process alone; and gauges
read from the database at scrape time (`StoreCollector`): queue depths and
ages are facts about the shared database, the same whichever process or host
is scraped, so no process keeps a copy that could go stale.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from app import metrics
from app.store import Store

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class StoreCollector(Collector):
    """Inbox and outbox depth and age, counted in the database when scraped."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def collect(self) -> Iterator[Metric]:
        now = self.store.inbox.clock()
        by_status, oldest = self.store.inbox.waiting()
        depth = GaugeMetricFamily(
            "odw_inbox_depth", "Deliveries stored and not finished, by status.", labels=["status"]
        )
        for status, n in sorted(by_status.items()):
            depth.add_metric([status], n)
        yield depth
        yield GaugeMetricFamily(
            "odw_inbox_oldest_age_seconds",
            "Age of the oldest unfinished delivery (0 when none waits).",
            value=_age(now, oldest),
        )
        by_kind, oldest = self.store.outbox.waiting()
        depth = GaugeMetricFamily(
            "odw_outbox_depth",
            "Effects not yet performed, by kind and status (pending, in_flight).",
            labels=["kind", "status"],
        )
        dead = GaugeMetricFamily(
            "odw_outbox_dead", "Effects given up on, by kind.", labels=["kind"]
        )
        for (kind, status), n in sorted(by_kind.items()):
            if status == "dead":
                dead.add_metric([kind], n)
            else:
                depth.add_metric([kind, status], n)
        yield depth
        yield dead
        yield GaugeMetricFamily(
            "odw_outbox_oldest_age_seconds",
            "Age of the oldest effect not yet performed (0 when none waits).",
            value=_age(now, oldest),
        )


class _Counted(Collector):
    """The counts of `app.metrics`: added up from every process's files in
    multiprocess mode, else this process's own. Every family is shown, even
    one nothing has counted yet (multiprocess mode knows only what some
    process wrote), so an operator's query never finds a family missing."""

    def __init__(self, multiprocess: bool) -> None:
        self.multiprocess = multiprocess

    def collect(self) -> Iterator[Metric]:
        if not self.multiprocess:
            yield from metrics.REGISTRY.collect()
            return
        seen = set()
        for family in MultiProcessCollector(None).collect():  # type: ignore[no-untyped-call]
            seen.add(family.name)
            yield family
        for family in metrics.REGISTRY.collect():
            if family.name not in seen:
                yield Metric(family.name, family.documentation, family.type)


def _age(now: float, since: float | None) -> float:
    return 0.0 if since is None else max(0.0, now - since)


def render(store: Store) -> bytes:
    """The whole exposition, built fresh for each scrape."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Counted(bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))))
    registry.register(StoreCollector(store))
    return generate_latest(registry)
