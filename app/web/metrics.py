"""Prometheus text exposition, computed from the store so every process and
host reports the same figures (nothing lives only in one process's memory)."""

from __future__ import annotations

from app.store import Store
from app.store.inbox import FINAL_STATUSES

LATENCY_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0)


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render(store: Store) -> str:
    lines: list[str] = []
    counts = store.inbox.counts()

    lines += [
        "# HELP odw_deliveries_total Deliveries in the inbox by event and outcome.",
        "# TYPE odw_deliveries_total counter",
    ]
    for (event, status), n in sorted(counts.items()):
        if status in FINAL_STATUSES:
            lines.append(f'odw_deliveries_total{{event="{_label(event)}",outcome="{status}"}} {n}')

    depth = {"received": 0, "processing": 0}
    for (_event, status), n in counts.items():
        if status in depth:
            depth[status] += n
    lines += [
        "# HELP odw_delivery_queue_depth Deliveries waiting or being processed.",
        "# TYPE odw_delivery_queue_depth gauge",
    ]
    lines += [f'odw_delivery_queue_depth{{status="{s}"}} {n}' for s, n in depth.items()]

    cumulative, count, total = store.inbox.latency_histogram(LATENCY_BUCKETS)
    lines += [
        "# HELP odw_delivery_processing_seconds Time from receipt to final status.",
        "# TYPE odw_delivery_processing_seconds histogram",
    ]
    for bound, n in zip(LATENCY_BUCKETS, cumulative, strict=True):
        lines.append(f'odw_delivery_processing_seconds_bucket{{le="{bound:g}"}} {n}')
    lines.append(f'odw_delivery_processing_seconds_bucket{{le="+Inf"}} {count}')
    lines.append(f"odw_delivery_processing_seconds_sum {total:.6f}")
    lines.append(f"odw_delivery_processing_seconds_count {count}")

    backlog = store.outbox.backlog()
    lines += [
        "# HELP odw_outbox_effects Effects in the outbox by status.",
        "# TYPE odw_outbox_effects gauge",
    ]
    for status in ("pending", "in_flight", "done", "dead"):
        lines.append(f'odw_outbox_effects{{status="{status}"}} {backlog.get(status, 0)}')
    lines += [
        "# HELP odw_outbox_backlog Effects not yet performed.",
        "# TYPE odw_outbox_backlog gauge",
        f"odw_outbox_backlog {backlog.get('pending', 0) + backlog.get('in_flight', 0)}",
    ]
    return "\n".join(lines) + "\n"
