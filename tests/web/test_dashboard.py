"""The dashboard over HTTP (Flask's test client, a real SQLite store, runs made
by the real core): who may read it (the admin token, as bearer or Basic
password), what a run's page says about a failed task, and that text from
roadmaps and agents stays text."""

from __future__ import annotations

import base64
import itertools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from app.service_settings import Settings
from app.store import Store
from app.web.app import create_app
from app.web.dashboard import access, pages
from app.web.dashboard.graph import GAP_X, NODE_W, layers, layout
from tests.web.dashboard_runs import (
    FAILING,
    HOSTILE_TITLE,
    RECOVERING,
    many_tasks,
    save_run,
)

ADMIN = "dashboard-admin-token-0123456789"
RUN = "gh-octo-demo-main-1"
BEARER = {"Authorization": f"Bearer {ADMIN}"}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    s = Store.open(f"sqlite:///{tmp_path / 'odw.sqlite3'}")
    yield s
    s.close()


def _client(store: Store, tmp_path: Path, token: str | None = ADMIN) -> FlaskClient:
    settings = Settings(webhook_secret="s" * 32, data_dir=tmp_path, admin_token=token)  # type: ignore[arg-type]
    return create_app(settings, store).test_client()


@pytest.fixture
def client(store: Store, tmp_path: Path) -> FlaskClient:
    save_run(store, FAILING, RUN)
    return _client(store, tmp_path)


# -- who may read it ---------------------------------------------------------------


def test_the_dashboard_does_not_exist_without_an_admin_token(store: Store, tmp_path: Path) -> None:
    save_run(store, FAILING, RUN)
    client = _client(store, tmp_path, token=None)
    for path in ("/dashboard/", f"/dashboard/runs/{RUN}"):
        assert client.get(path, headers=BEARER).status_code == 404, path


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.mark.parametrize(
    "header",
    [
        None,
        "Bearer wrong",
        f"Basic {ADMIN}",
        f"Bearer {ADMIN}x",
        _basic("admin", ADMIN + "x"),
        _basic(ADMIN, ""),
        "Basic !!not-base64!!",
    ],
    ids=["none", "wrong", "basic-unencoded", "longer", "basic-wrong", "token-as-user", "garbage"],
)
def test_without_the_token_every_page_asks_the_browser_for_it(
    client: FlaskClient, header: str | None
) -> None:
    for path in ("/dashboard/", f"/dashboard/runs/{RUN}", "/dashboard/runs/nope"):
        resp = client.get(path, headers={"Authorization": header} if header else {})
        body = resp.get_data(as_text=True)
        assert resp.status_code == 401, path
        assert resp.headers["WWW-Authenticate"].startswith('Basic realm="ODW dashboard"')
        assert "Sign in" in body and "1.1" not in body and "octo/demo" not in body


@pytest.mark.parametrize(
    "header",
    [f"Bearer {ADMIN}", _basic("anyone", ADMIN), _basic("", ADMIN)],
    ids=["bearer", "basic", "basic-no-user"],
)
def test_the_token_as_bearer_or_basic_password_reads_the_pages(
    client: FlaskClient, header: str
) -> None:
    auth = {"Authorization": header}
    for path in ("/dashboard/", f"/dashboard/runs/{RUN}"):
        resp = client.get(path, headers=auth)
        assert resp.status_code == 200, path
        assert "Set-Cookie" not in resp.headers
    assert client.get("/dashboard/runs/gh-no-such-run", headers=auth).status_code == 404


def test_the_basic_password_is_read_exactly() -> None:
    assert access.basic_password(_basic("u", "p:q")) == "p:q"
    assert access.basic_password(_basic("u", "")) == ""
    for header in (None, "", "Basic", "Bearer x", "Basic " + base64.b64encode(b"nocolon").decode()):
        assert access.basic_password(header) is None, header


def test_pages_forbid_scripts_framing_and_caching(client: FlaskClient) -> None:
    for path, auth in (
        ("/dashboard/", BEARER),
        (f"/dashboard/runs/{RUN}", BEARER),
        ("/dashboard/", {}),
    ):
        resp = client.get(path, headers=auth)
        csp = resp.headers["Content-Security-Policy"]
        assert "default-src 'none'" in csp and "script-src" not in csp
        assert "frame-ancestors 'none'" in csp
        assert resp.headers["Cache-Control"] == "no-store"


# -- what it shows ------------------------------------------------------------------


def test_a_failed_run_shows_its_halt_failed_node_assessment_and_salvage(
    client: FlaskClient,
) -> None:
    body = client.get(f"/dashboard/runs/{RUN}", headers=BEARER).get_data(as_text=True)
    assert 'class="halted"' in body and "task 1.1 failed at gates" in body
    assert re.search(r'data-task="1\.1" data-status="failed"', body)
    assert re.search(r'data-task="1\.3" data-status="landed"', body)
    assert 'data-from="1.1" data-to="1.2"' in body  # the dependency edge
    card = body[body.index('id="task-1.1"') : body.index('id="task-1.2"')]
    assert "gate:build" in card and "Assessment" in card and "continue-manual" in card
    assert "Salvage" in card and "docs/execplans/1-1.md" in card
    assert "/odw retry 1.1" in card


def test_a_run_that_found_surviving_branches_shows_the_recovery_object(
    store: Store, client: FlaskClient
) -> None:
    save_run(store, RECOVERING, "gh-octo-demo-main-2")
    body = client.get("/dashboard/runs/gh-octo-demo-main-2", headers=BEARER).get_data(as_text=True)
    recovery = body[body.index("<h2>Recovery</h2>") : body.index("<h2>Tasks</h2>")]
    assert (
        "<dt>candidates</dt><dd>1</dd>" in recovery and "<dt>enabled</dt><dd>false</dd>" in recovery
    )
    assert 'class="recovery-skipped"' in recovery and "unmapped-branch" in recovery
    assert 'class="recovery-unresolved"' in recovery and "roadmap-1-2" in recovery
    assert "needs-operator-recovery" in body[: body.index("<h2>Task graph</h2>")]
    failed_run = client.get(f"/dashboard/runs/{RUN}", headers=BEARER).get_data(as_text=True)
    assert "<h2>Recovery</h2>" not in failed_run  # no recovery pass, no section


def test_untrusted_text_is_escaped_everywhere_it_appears(client: FlaskClient) -> None:
    for path in ("/dashboard/", f"/dashboard/runs/{RUN}"):
        body = client.get(path, headers=BEARER).get_data(as_text=True)
        assert "<img" not in body and "<script" not in body and "<b>" not in body
    body = client.get(f"/dashboard/runs/{RUN}", headers=BEARER).get_data(as_text=True)
    assert "&lt;img src=x onerror=" in body  # shown, as text
    assert HOSTILE_TITLE not in body


def test_the_overview_lists_installations_runs_and_deliveries(
    store: Store, client: FlaskClient
) -> None:
    with store.transaction() as tx:
        store.installations.upsert(7, account_login="octo", target_type="Organization", tx=tx)
        store.installations.add_repositories(7, [{"id": 1, "full_name": "octo/demo"}], tx=tx)
    store.inbox.record("d-1", "push", None, 7, b"{}")
    store.inbox.record("d-2", "issue_comment", "created", 7, b"{}")
    body = client.get("/dashboard/", headers=BEARER).get_data(as_text=True)
    assert "octo/demo" in body and "Organization" in body
    assert RUN in body and "1 of 3 landed · 1 blocked · 1 failed" in body
    assert "d-1" in body and "issue_comment.created" in body and "received 2" in body
    other = client.get("/dashboard/?repo=octo/other", headers=BEARER).get_data(as_text=True)
    assert RUN not in other


def test_a_300_task_run_draws_every_task_and_dependency(store: Store, tmp_path: Path) -> None:
    spec = many_tasks(300)
    save_run(store, spec, "gh-octo-big-main-1")
    body = _client(store, tmp_path).get("/dashboard/runs/gh-octo-big-main-1", headers=BEARER)
    text = body.get_data(as_text=True)
    assert len(re.findall(r'<a href="#task-[^"]+" class="node ', text)) == 300
    assert len(re.findall(r'<path class="edge"', text)) == 298  # every task from 1.3 on
    assert text.count('<details class="task ') == 300


def test_the_overview_lists_open_runs_and_the_latest_finished_ones(tmp_path: Path) -> None:
    ticks = iter(range(1_000, 2_000))
    store = Store.open(f"sqlite:///{tmp_path / 'runs.sqlite3'}", clock=lambda: float(next(ticks)))
    try:
        extra = 2
        for k in range(pages.RECENT_FINISHED_RUNS + extra):  # oldest first
            key = {"installation": 1, "repository": f"octo/r{k}", "base": "main"}
            store.projections.put_run(f"gh-done-{k:03d}", 1, "finished", {"key": key})
        key = {"installation": 1, "repository": "octo/r0", "base": "main"}
        store.projections.put_run("gh-open", 1, "running", {"key": key})
        client = _client(store, tmp_path)
        body = client.get("/dashboard/", headers=BEARER).get_data(as_text=True)
        shown = re.findall(r'href="/dashboard/runs/(gh-[^"]+)"', body)
        assert shown[0] == "gh-open"  # open runs first
        assert len(shown) == 1 + pages.RECENT_FINISHED_RUNS
        assert "gh-done-000" not in shown and "gh-done-001" not in shown
        assert shown[1] == f"gh-done-{pages.RECENT_FINISHED_RUNS + extra - 1:03d}"
        one = client.get("/dashboard/?repo=octo/r0", headers=BEARER).get_data(as_text=True)
        assert re.findall(r'href="/dashboard/runs/(gh-[^"]+)"', one) == ["gh-open", "gh-done-000"]
    finally:
        store.close()


def test_only_http_links_are_linked() -> None:
    assert pages.safe_url("https://github.com/octo/demo/pull/1")
    for bad in ("javascript:alert(1)", "data:text/html,x", "//evil.example", "", None, 3):
        assert pages.safe_url(bad) is None, bad


# -- the graph's layout ---------------------------------------------------------------


def test_a_task_sits_one_layer_below_its_deepest_dependency() -> None:
    requires = {"a": [], "b": ["a"], "c": ["a", "b"], "d": [], "e": ["c", "missing"]}
    assert layers(requires) == {"a": 0, "b": 1, "c": 2, "d": 0, "e": 3}


def test_a_dependency_cycle_shares_one_layer_and_the_layout_ends() -> None:
    requires = {"a": [], "b": ["a", "c"], "c": ["b"], "d": ["c"]}
    assert layers(requires) == {"a": 0, "b": 1, "c": 1, "d": 2}
    placed = layout(list(requires), requires)
    assert len(placed.nodes) == 4 and len(placed.edges) == 4
    ys = {n.id: n.y for n in placed.nodes}
    assert ys["a"] < ys["b"] == ys["c"] < ys["d"]
    assert all(0 <= n.x <= placed.width and 0 <= n.y <= placed.height for n in placed.nodes)


def test_a_task_sits_under_the_middle_of_its_dependencies() -> None:
    requires = {"a": [], "b": [], "c": [], "d": ["c"], "e": ["a", "c"], "f": ["c"]}
    placed = {n.id: n for n in layout(list(requires), requires).nodes}
    assert placed["d"].x == placed["c"].x
    assert placed["e"].x == (placed["a"].x + placed["c"].x) // 2
    assert placed["f"].x == placed["d"].x + NODE_W + GAP_X  # pushed right of d, not on it


def test_no_two_tasks_overlap_in_a_wide_layer() -> None:
    order = [f"t{i}" for i in range(40)]
    requires = {t: (["t0"] if t != "t0" else []) for t in order}
    placed = layout(order, requires)
    for layer in ({n.x for n in placed.nodes if n.y == y} for y in {n.y for n in placed.nodes}):
        xs = sorted(layer)
        assert all(b - a >= NODE_W for a, b in itertools.pairwise(xs))
    assert len({(n.x, n.y) for n in placed.nodes}) == 40
    assert max(n.x for n in placed.nodes) + NODE_W <= placed.width


def test_the_overview_says_what_odw_status_prints(store: Store, client: FlaskClient) -> None:
    """One view for both: a stopped run is `halted` with the same task line."""
    from app.apphost.run_views import list_runs
    from app.cli.status_cmd import run_text

    # The App keeps a stopped run open, waiting for `/odw resume`.
    saved = store.projections.run(RUN)
    assert saved is not None
    store.projections.put_run(RUN, saved.version, "running", dict(saved.data))
    [run] = list_runs(store)
    assert run.status == "halted" and run.progress == "1 of 3 landed · 1 blocked · 1 failed"
    assert f"  tasks: {run.progress}" in run_text(run)
    body = client.get("/dashboard/", headers=BEARER).get_data(as_text=True)
    assert '<span class="badge status-halted">halted</span>' in body and run.progress in body
    page = client.get(f"/dashboard/runs/{RUN}", headers=BEARER).get_data(as_text=True)
    assert "status-halted" in page
