"""ODW's Prometheus counters and histograms, counted where each thing happens.

Under `odw serve` every process it starts (the HTTP workers, the intake, the
delivery worker) writes its counts to files in `PROMETHEUS_MULTIPROC_DIR`
(prometheus_client's multiprocess mode, set by `odw serve` before any of them
starts) and `/metrics` adds them up; anywhere else they count in this process.
What the database knows better (queue depths and ages) is not here: `/metrics`
reads it at scrape time (`app.web.metrics`).

Labels take only values ODW chose (event names of verified deliveries, effect
kinds, stage names, installation ids): nothing a stranger sends can grow them.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

# Every family below, and nothing else: `/metrics` reads this registry when it
# is not in multiprocess mode (the default registry also has the process's own
# collectors, which multiprocess mode cannot add up).
REGISTRY = CollectorRegistry(auto_describe=True)

WEBHOOK_DELIVERIES = Counter(
    "odw_webhook_deliveries",
    "Webhook requests answered at the edge, by event (`unverified` before the "
    "signature holds) and outcome (`received`, `duplicate`, `pong`, or the refusal).",
    ["event", "outcome"],
    registry=REGISTRY,
)
DELIVERIES_HANDLED = Counter(
    "odw_deliveries_handled",
    "Stored deliveries the delivery worker finished or put back, by event and "
    "outcome (processed, ignored, rejected, failed, retrying).",
    ["event", "outcome"],
    registry=REGISTRY,
)
DELIVERY_SECONDS = Histogram(
    "odw_delivery_processing_seconds",
    "Time from a delivery's receipt to its final status.",
    buckets=(0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0),
    registry=REGISTRY,
)
EFFECTS = Counter(
    "odw_effects",
    "Outbox effects the executor handled, by kind and outcome (done, retry, busy, put-back, dead).",
    ["kind", "outcome"],
    registry=REGISTRY,
)
GITHUB_REQUESTS = Counter(
    "odw_github_requests",
    "REST requests sent to GitHub, by installation (0: as the App itself).",
    ["installation"],
    registry=REGISTRY,
)
RATE_LIMIT_WAITS = Counter(
    "odw_github_rate_limit_waits",
    "Waits for a GitHub rate limit (primary, secondary) or ODW's content-creation "
    "budget (content), by installation.",
    ["installation", "limit"],
    registry=REGISTRY,
)
RATE_LIMIT_WAIT_SECONDS = Counter(
    "odw_github_rate_limit_wait_seconds",
    "Seconds those waits asked for, by installation and limit.",
    ["installation", "limit"],
    registry=REGISTRY,
)
STAGE_SECONDS = Histogram(
    "odw_stage_duration_seconds",
    "A stage attempt's time from its dispatch to its verdict being read, by stage.",
    ["stage"],
    buckets=(30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0),
    registry=REGISTRY,
)
LANDINGS = Counter(
    "odw_landings",
    "Integrations of a finished task, by outcome (landed, failed, fault).",
    ["outcome"],
    registry=REGISTRY,
)
INTEGRATION_ATTEMPTS = Histogram(
    "odw_integration_attempts",
    "Tries at the base (pushes or merges) per integration.",
    buckets=(1, 2, 3, 4, 5, 7, 10),
    registry=REGISTRY,
)
LEASES_ADOPTED = Counter(
    "odw_leases_adopted",
    "Expired leases taken over from another owner, by what the lease guards "
    "(run: a local run; merge: a base's merge lock; other names' first word).",
    ["lease"],
    registry=REGISTRY,
)
CLAIMS_RECLAIMED = Counter(
    "odw_claims_reclaimed",
    "Inbox deliveries and outbox effects claimed again after their holder's "
    "lease expired (a dead or stalled process's work), by queue.",
    ["queue"],
    registry=REGISTRY,
)
