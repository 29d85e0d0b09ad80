"""The dashboard's page models: pure functions from store rows (and a run's
state) to frozen dataclasses the templates only print.

Nothing here reads the store or knows HTML. Every string that came from
outside ODW (task titles from roadmaps, details and check reasons from agents,
URLs from GitHub's answers) is carried as it is; the templates escape it, and a
link is kept only when it is an `https://` or `http://` URL.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from app.apphost.run_views import RunLine, is_app_run, run_line
from app.core.recovery_report import recovery_json
from app.core.run_view import run_view, task_view
from app.core.state import RunState
from app.store.inbox import Delivery
from app.store.installations import InstallationRow, RepositoryRow
from app.store.projections import RunView
from app.web.dashboard.graph import NODE_H, NODE_W, layout

RECENT_DELIVERIES = 50
RECENT_FINISHED_RUNS = 100  # on the overview; a repository's page lists all its runs


@dataclass(frozen=True)
class Link:
    label: str
    url: str


def safe_url(url: object) -> str | None:
    """`url` when it is an absolute http(s) URL, else None (never `javascript:`)."""
    if not isinstance(url, str):
        return None
    parts = urlsplit(url)
    return url if parts.scheme in ("https", "http") and parts.netloc else None


def when(epoch: float | None) -> str:
    if epoch is None:
        return ""
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


# -- the overview ---------------------------------------------------------------


@dataclass(frozen=True)
class InstallationLine:
    id: int
    account: str
    kind: str  # Organization / User
    selection: str  # all / selected
    state: str  # active / suspended / deleted
    repositories: tuple[str, ...]


@dataclass(frozen=True)
class DeliveryLine:
    id: str
    event: str
    status: str
    attempts: int
    installation: int | None
    received: str
    took: str  # seconds from receipt to its final status, "" while open
    error: str


@dataclass(frozen=True)
class Overview:
    installations: tuple[InstallationLine, ...]
    runs: tuple[RunLine, ...]  # the same lines `odw status` prints
    deliveries: tuple[DeliveryLine, ...]
    delivery_counts: tuple[tuple[str, int], ...]  # by status, over the lines shown


def overview(
    installations: Iterable[InstallationRow],
    repositories: Iterable[RepositoryRow],
    runs: Iterable[RunView],
    deliveries: Iterable[Delivery],
) -> Overview:
    repos: dict[int, list[str]] = {}
    for r in repositories:
        repos.setdefault(r.installation_id, []).append(r.full_name)
    lines = tuple(
        InstallationLine(
            id=i.id,
            account=i.account_login or "?",
            kind=i.target_type or i.account_type or "",
            selection=i.repository_selection or "",
            state="deleted" if i.deleted else "suspended" if i.suspended else "active",
            repositories=tuple(repos.get(i.id, ())),
        )
        for i in installations
    )
    shown = tuple(_delivery_line(d) for d in deliveries)
    counts = Counter(d.status for d in shown)
    ordered = sorted(runs, key=lambda v: (v.status != "running", -v.updated_at, v.run_id))
    return Overview(
        lines,
        tuple(run_line(v) for v in ordered if is_app_run(v)),
        shown,
        tuple(sorted(counts.items())),
    )


def _delivery_line(d: Delivery) -> DeliveryLine:
    took = f"{d.finished_at - d.received_at:.2f} s" if d.finished_at is not None else ""
    event = f"{d.event}.{d.action}" if d.action else d.event
    return DeliveryLine(
        d.id, event, d.status, d.attempts, d.installation_id, when(d.received_at), took,
        d.error or "",
    )  # fmt: skip


# -- one run --------------------------------------------------------------------


@dataclass(frozen=True)
class CheckLine:
    name: str
    status: str
    reason: str
    code: int | None


@dataclass(frozen=True)
class TaskCard:
    id: str
    title: str
    status: str
    stage: str
    head: str  # one line: what it does now, or how it ended
    detail: str
    branch: str
    requires: tuple[str, ...]
    attempts: tuple[tuple[str, int], ...]  # per stage, this retry cycle
    retries: int
    verdict: str  # "gates attempt 1: gate" ("" before any)
    checks: tuple[CheckLine, ...]
    assessment: tuple[tuple[str, str], ...]  # field, value (empty: not assessed)
    salvage: tuple[tuple[str, str], ...]
    failure: str | None
    moves: tuple[str, ...]  # "/odw retry 1.2: start over ..."
    links: tuple[Link, ...]


@dataclass(frozen=True)
class GraphNode:
    id: str
    title: str
    status: str
    x: int
    y: int
    label: str  # the id, cut to fit the box


@dataclass(frozen=True)
class Graph:
    nodes: tuple[GraphNode, ...]
    edges: tuple[tuple[str, str, str], ...]  # dependency, dependent, SVG path
    width: int
    height: int
    node_w: int = NODE_W
    node_h: int = NODE_H


@dataclass(frozen=True)
class Table:
    name: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class RunPage:
    run_id: str
    repository: str
    base: str
    status: str
    title: str
    conclusion: str | None
    halted: str | None
    faults: tuple[tuple[str, int], ...]
    statuses: tuple[tuple[str, int], ...]  # tasks by status
    graph: Graph
    tasks: tuple[TaskCard, ...]
    recovery: tuple[tuple[str, str], ...] | None  # None: no recovery pass
    recovery_tables: tuple[Table, ...]
    moves: tuple[tuple[str, str, str], ...]  # what, by, refused
    remediation: str | None
    updated: str


def run_page(
    state: RunState,
    handles: Mapping[str, Mapping[str, Any]],
    meta: Mapping[str, Any],
    *,
    status: str,
    updated_at: float | None,
) -> RunPage:
    """The run page from the run's state, its tasks' GitHub handles (`run_tasks`)
    and its projection's data (`meta`: the run key)."""
    view = run_view(state)
    tasks = tuple(_card(state, t.id, handles.get(t.id, {})) for t in state.tasks.values())
    order = [c.id for c in tasks]
    placed = layout(order, {c.id: c.requires for c in tasks})
    titles = {c.id: (c.title, c.status) for c in tasks}
    graph = Graph(
        nodes=tuple(
            GraphNode(n.id, titles[n.id][0], titles[n.id][1], n.x, n.y, _fit(n.id, 14))
            for n in placed.nodes
        ),
        edges=tuple((e.dependency, e.dependent, e.path) for e in placed.edges),
        width=placed.width,
        height=placed.height,
    )
    key = _mapping(meta.get("key"))
    recovery = view_recovery(recovery_json(state))
    return RunPage(
        run_id=state.run_id,
        repository=str(key.get("repository") or ""),
        base=state.base,
        status=status,
        title=view.title,
        conclusion=view.conclusion,
        halted=view.halted,
        faults=view.fault_metrics,
        statuses=tuple(sorted(Counter(c.status for c in tasks).items())),
        graph=graph,
        tasks=tasks,
        recovery=recovery[0],
        recovery_tables=recovery[1],
        moves=tuple((m.what, m.by, m.refused) for m in view.moves),
        remediation=view.remediation,
        updated=when(updated_at),
    )


def _card(s: RunState, task_id: str, h: Mapping[str, Any]) -> TaskCard:
    t = s.tasks[task_id]
    v = task_view(s, t)
    verdict = t.verdict or {}
    checks = tuple(
        CheckLine(str(c.get("name")), str(c.get("status")), str(c.get("reason") or ""),
                  c.get("code") if isinstance(c.get("code"), int) else None)
        for c in verdict.get("checks") or []
        if isinstance(c, dict)
    )  # fmt: skip
    links = [
        Link(label, url)
        for label, key in (
            ("pull request", "pullUrl"),
            ("check run", "checkUrl"),
            ("job", "jobUrl"),
        )
        if (url := safe_url(h.get(key)))
    ]
    judged = v.last
    return TaskCard(
        id=t.id,
        title=v.title,
        status=t.status,
        stage=t.stage or "",
        head=v.head,
        detail=t.detail,
        branch=t.branch,
        requires=tuple(r for r in t.requires if r in s.tasks),
        attempts=tuple((r.stage, r.attempts) for r in v.stages),
        retries=v.retries,
        verdict=f"{judged.name} attempt {judged.attempt}: {judged.outcome}" if judged else "",
        checks=checks,
        assessment=_fields(
            t.assessment.model_dump(mode="json", by_alias=True) if t.assessment else {}
        ),
        salvage=_fields(t.salvage.model_dump(mode="json") if t.salvage else {}),
        failure=v.failure,
        moves=tuple(f"/odw {m.move} {t.id}{m.usage}: {m.says}" for m in v.moves),
        links=tuple(links),
    )


def _fields(data: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """An assessment's or salvage's fields, lists joined, empty ones left out."""
    out = []
    for k, value in data.items():
        if value in (None, "", [], {}):
            continue
        if isinstance(value, bool):
            text = "yes" if value else "no"
        else:
            text = "; ".join(map(str, value)) if isinstance(value, list) else str(value)
        out.append((k, text))
    return tuple(out)


def view_recovery(
    recovery: Mapping[str, Any] | None,
) -> tuple[tuple[tuple[str, str], ...] | None, tuple[Table, ...]]:
    """The recovery object (`recovery_json`): its scalars, then one table per list."""
    if recovery is None:
        return None, ()
    scalars = tuple(
        (k, str(v).lower() if isinstance(v, bool) else str(v))
        for k, v in recovery.items()
        if not isinstance(v, list)
    )
    tables = tuple(_table(k, v) for k, v in recovery.items() if isinstance(v, list) and v)
    return scalars, tables


def _table(name: str, rows: Sequence[Any]) -> Table:
    dicts = [r for r in rows if isinstance(r, dict)]
    headers: list[str] = []
    for r in dicts:
        headers += [k for k in r if k not in headers]
    return Table(
        name,
        tuple(headers),
        tuple(tuple("" if r.get(h) is None else str(r.get(h)) for h in headers) for r in dicts),
    )


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
