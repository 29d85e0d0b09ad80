"""A real browser for the tests that look at the dashboard: Debian's Chromium
(`make browser`) driven by Playwright, which is pointed at that binary and
never downloads a browser of its own.

`chromium_page()` skips the test when either is missing, saying how to get
them, and fails instead under CI=true (tests/needs.py); given the admin token
it answers the dashboard's sign-in prompt (HTTP Basic). `shoot()` is what
`make demo ARGS=--dashboard-shot FILE` uses too.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from tests.needs import CHROMIUM, unavailable

if TYPE_CHECKING:
    from playwright.sync_api import Page

# Headless, without the sandbox (tests run as root in containers) and without
# the background traffic a closed network refuses (updates, sync, Google hosts).
ARGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def chromium_path() -> str | None:
    given = os.environ.get("ODW_TEST_CHROMIUM")
    if given:
        return given if Path(given).is_file() else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


def available() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return chromium_path() is not None


@contextmanager
def browser_page(token: str | None = None, width: int = 1400, height: int = 1000) -> Iterator[Page]:
    """A fresh page of a headless Chromium (raises when there is none); with
    `token`, it answers the dashboard's sign-in prompt with it (HTTP Basic)."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if path is None:
        raise RuntimeError("no chromium binary (make browser, or ODW_TEST_CHROMIUM)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=list(ARGS))
        try:
            credentials = {"username": "operator", "password": token} if token else None
            context = browser.new_context(
                viewport={"width": width, "height": height},
                http_credentials=credentials,  # type: ignore[arg-type]
            )
            yield context.new_page()
        finally:
            browser.close()


@contextmanager
def chromium_page(token: str | None = None) -> Iterator[Page]:
    """`browser_page()`, or a skip (a failure under CI) when there is no browser."""
    if not available():
        unavailable(CHROMIUM)
    with browser_page(token) as page:
        yield page


def shoot(base_url: str, token: str, path: str, out: Path) -> None:
    """A full-page PNG of the dashboard's `path`, signed in with `token`, to `out`."""
    with browser_page(token) as page:
        resp = page.goto(base_url + path)
        if resp is None or resp.status != 200:
            raise RuntimeError(f"{path} answered {resp.status if resp else 'nothing'}")
        page.screenshot(path=str(out), full_page=True)
