"""The dashboard in a real browser (Debian's Chromium driven by Playwright), on a
real run: the service under gunicorn, the fake GitHub, a local "Actions" running
the scripted agent, and a gate that fails for task 1.1 only. Screenshots are
saved under the test's temporary directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.apphost.harness import Service, explain, results, wait_until
from tests.browser import chromium_page
from tests.fakegithub import FakeGitHub
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.state import Repository

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]

ADMIN = "dashboard-browser-admin-token-42"
# The title a roadmap gives task 1.1: markup that would run if it were not text.
HOSTILE = '<img src=x onerror="document.title=\'pwned\'"><b id="injected">bold</b>'
ROADMAP = f"""\
# Roadmap

- [ ] 1.1. Add a greeting {HOSTILE}
- [ ] 1.2. Add a farewell
  - Requires 1.1.
- [ ] 1.3. Add a changelog
"""
ODW = {
    # The second gate fails on 1.1's branch alone (its implement writes work/1-1.txt).
    "gates": ["test -d work", "test ! -e work/1-1.txt"],
    "config": {"maxParallel": 2, "gateRetryBudget": 0, "routeBudget": 0},
}


@pytest.fixture
def sample_spec() -> dict[str, Any]:
    return {"roadmap": ROADMAP, "odw": ODW}


@pytest.fixture
def service_env_extra() -> dict[str, str]:
    return {"ODW_ADMIN_TOKEN": ADMIN}


def test_the_dashboard_shows_a_failed_task_its_assessment_salvage_and_the_halt(
    fake: FakeGitHub,
    service: Service,
    sample: Repository,
    actions: LocalActions,
    tmp_path: Path,
) -> None:
    service.run_app()
    wait_until(
        "1.1 to fail and be assessed, 1.3 to land",
        lambda: (
            (rows := results(service)).get("1.1", {}).get("assessment")
            and rows.get("1.3", {}).get("status") == "landed"
        ),
        timeout=240,
    )
    service.wait_settled()
    run_id = service.runs()[0]["run"]
    rows = results(service)
    assert rows["1.1"]["status"] == "failed", explain(service, actions)

    with chromium_page(ADMIN) as page:
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(service.url + "/dashboard/")
        page.screenshot(path=str(tmp_path / "overview.png"), full_page=True)
        assert page.locator("table.runs").inner_text().count(run_id) == 1
        assert "octo/demo" in page.locator("table.installations").inner_text()
        assert "workflow_run" in page.locator("table.deliveries").inner_text()

        # Until the page's `load` event its stylesheet may not apply yet: a
        # node's computed fill is then SVG's default black, for every status.
        with page.expect_navigation(wait_until="load"):
            page.click(f"text={run_id}")
        page.wait_for_selector("#graph svg")
        # The graph: the failed node, coloured as failed, and the edge it blocks.
        failed = page.locator('#graph [data-task="1.1"]')
        assert failed.get_attribute("data-status") == "failed"
        fill = failed.locator("rect").evaluate("r => getComputedStyle(r).fill")
        landed = page.locator('#graph [data-task="1.3"] rect').evaluate(
            "r => getComputedStyle(r).fill"
        )
        assert fill != landed
        assert page.locator('#graph [data-from="1.1"][data-to="1.2"]').count() == 1
        page.locator("#graph").screenshot(path=str(tmp_path / "task-graph.png"))
        # The halt, and the failed task's card: verdict checks, assessment, salvage.
        halted = page.locator("#halted").inner_text()
        assert "1.1" in halted and "failed" in halted
        card = page.locator('[id="task-1.1"]')
        assert card.get_attribute("open") is not None  # a failed task is shown open
        text = card.inner_text()
        assert "gate" in text and "failed" in text
        assert "Assessment" in text and rows["1.1"]["assessment"]["classification"] in text
        assert "Salvage" in text and rows["1.1"]["salvage"]["classification"] in text
        pull = next(p for p in fake.pulls.values() if p.head == "roadmap-1-1")
        href = card.locator("a.link-pull-request").get_attribute("href") or ""
        assert href.endswith(f"/pull/{pull.number}"), href
        assert card.locator("a.link-check-run").count() == 1
        # The hostile title is shown as text and ran nothing.
        assert HOSTILE in card.locator(".task-title").inner_text()
        assert page.locator("#injected").count() == 0
        assert page.title() != "pwned" and dialogs == []
        page.screenshot(path=str(tmp_path / "run.png"), full_page=True)

    for name in ("overview.png", "task-graph.png", "run.png"):
        assert (tmp_path / name).stat().st_size > 1000, name


def test_a_browser_without_the_token_sees_only_the_sign_in_page(
    fake: FakeGitHub, service: Service
) -> None:
    url = service.url + "/dashboard/"
    with chromium_page("not-the-admin-token") as page:
        resp = page.goto(url)
        assert resp is not None and resp.status == 401
        assert page.locator("h1").inner_text() == "Sign in"
        assert "<table" not in page.content()
        assert page.context.cookies() == []
    with chromium_page() as page:
        from playwright.sync_api import Error as PlaywrightError  # there is a browser

        # Challenged with nothing to give, the browser does not load the page at all.
        with pytest.raises(PlaywrightError, match="ERR_INVALID_AUTH_CREDENTIALS"):
            page.goto(url)
        asked = page.context.request.get(url)
        assert asked.status == 401
        assert asked.headers["www-authenticate"].startswith("Basic ")
