"""`odw app register` runs GitHub's manifest flow and writes settings `odw
serve` starts from (issue 29, item 1), over real HTTP against the fake GitHub.

The browser is simulated: the test reads the local page, submits its form to
the fake's "new App" form (which stands in for the person's click on
**Create GitHub App** and redirects back with a code), and follows the
redirect to the local page, which exchanges the code.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from dotenv import dotenv_values

from app.github.manifest import load
from tests.apphost.harness import (
    REPO,
    Service,
    install_sample,
    sample_files,
    wait_until,
)
from tests.conftest import odw_executable
from tests.fakegithub import FakeGitHub
from tests.service.live import service_env

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]

PUBLIC = "https://odw.example.org"


class _Form(HTMLParser):
    """The page's one form: its action and its hidden fields."""

    def __init__(self) -> None:
        super().__init__()
        self.action = ""
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "form":
            self.action = a.get("action") or ""
        elif tag == "input" and a.get("name"):
            self.fields[str(a["name"])] = a.get("value") or ""


def _register(fake: FakeGitHub, tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    """`odw app register` against the fake, started; its first line names the page."""
    return subprocess.Popen(
        [odw_executable(), "app", "register", "--url", PUBLIC, "--no-browser",
         "--github-url", fake.host_url, "--api-url", fake.api_url, *args],
        env=service_env(tmp_path, None),
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def _page_url(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("odw app: open "):
            return line.split()[3]
    raise AssertionError(f"no page address; stderr: {proc.stderr.read() if proc.stderr else ''}")


def _finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """The rest of its stdout, its stderr, once it has exited."""
    proc.wait(timeout=60)
    assert proc.stdout is not None and proc.stderr is not None
    return proc.stdout.read(), proc.stderr.read()


def _browse(page: str) -> tuple[_Form, requests.Response]:
    """What a browser does: load the page, submit its form, follow GitHub's redirect."""
    form = _Form()
    form.feed(requests.get(page, timeout=10).text)
    created = requests.post(form.action, data=form.fields, allow_redirects=False, timeout=30)
    assert created.status_code == 302, created.text
    back = requests.get(created.headers["Location"], timeout=60)
    return form, back


def test_register_writes_private_settings_that_odw_serve_starts_from_and_acts_on(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    first_app = fake.app_id
    (tmp_path / "settings").mkdir()
    proc = _register(fake, tmp_path, "--org", "acme", "--env-file", "settings/odw.env")
    assert proc.stdin is not None
    proc.stdin.write("ODW Acme\n")  # the name, asked for since --name is missing
    proc.stdin.close()
    page = _page_url(proc)
    form, back = _browse(page)
    out, err = _finish(proc)
    assert proc.returncode == 0, err

    # The form went to the organisation's "new App" form with a state that came back.
    action = urlsplit(form.action)
    assert action.path == "/organizations/acme/settings/apps/new"
    state = parse_qs(action.query)["state"][0]
    assert len(state) >= 20
    manifest = json.loads(form.fields["manifest"])
    spec = load()
    assert manifest["name"] == "ODW Acme"
    assert manifest["hook_attributes"]["url"] == f"{PUBLIC}/webhooks"
    assert manifest["redirect_url"] == page.rstrip("/") + "/callback"
    assert manifest["default_permissions"] == spec["default_permissions"]
    assert manifest["default_events"] == spec["default_events"]

    # The fake registered a new App named by GitHub's slug; the page and the
    # command say where to install it.
    assert fake.app_id != first_app and fake.app_slug == "odw-acme"
    install = f"{fake.host_url}/apps/odw-acme/installations/new"
    assert back.status_code == 200 and install in back.text
    assert f"install the App: {install}" in out
    assert "id " + str(fake.app_id) in out and "slug odw-acme" in out

    settings = tmp_path / "settings" / "odw.env"
    assert stat.S_IMODE(settings.stat().st_mode) == 0o600
    values = dotenv_values(settings)
    assert values == {
        "ODW_APP_ID": str(fake.app_id),
        "ODW_WEBHOOK_SECRET": fake.webhooks.secret,
        "ODW_PRIVATE_KEY": values["ODW_PRIVATE_KEY"],
        "ODW_GITHUB_API_URL": fake.api_url,
    }
    assert (values["ODW_PRIVATE_KEY"] or "").startswith("-----BEGIN RSA PRIVATE KEY-----\n")
    assert f"ODW_ENV_FILE={Path('settings/odw.env')} odw serve" in out

    # `odw serve` from that file alone: the signed installation webhook is taken,
    # and a run starts (the App's JWT and an installation token from the key).
    data = tmp_path / "service"
    data.mkdir()
    env = {"ODW_ENV_FILE": str(settings), "ODW_POLL_SECONDS": "0.05"}
    service = Service(fake, data, env, secret_in_env=False).start()
    try:
        repo = install_sample(fake, service, sample_files())
        service.run_app()
        (run,) = wait_until("a run to start", service.runs, timeout=60)
        assert run["sha"] == repo.git.sha("refs/heads/main")
        assert run["key"]["repository"] == REPO
        assert "the App is odw-acme (bot odw-acme[bot])" in service.log()
    finally:
        service.stop()


def test_a_used_code_is_refused_and_the_settings_file_is_not_written(
    fake: FakeGitHub, tmp_path: Path
) -> None:
    proc = _register(fake, tmp_path, "--name", "odw-twice")
    page = _page_url(proc)
    form = _Form()
    form.feed(requests.get(page, timeout=10).text)
    created = requests.post(form.action, data=form.fields, allow_redirects=False, timeout=30)
    code = parse_qs(urlsplit(created.headers["Location"]).query)["code"][0]
    used = requests.post(f"{fake.api_url}/app-manifests/{code}/conversions", timeout=30)
    assert used.status_code == 201
    back = requests.get(created.headers["Location"], timeout=60)
    _, err = _finish(proc)
    assert back.status_code == 502
    assert proc.returncode == 1
    assert err.count("\n") == 1 and "404" in err and "run `odw app register` again" in err
    assert not (tmp_path / "odw.env").exists()


def test_an_existing_settings_file_is_never_replaced(fake: FakeGitHub, tmp_path: Path) -> None:
    (tmp_path / "odw.env").write_text("ODW_APP_ID=1\n")
    proc = _register(fake, tmp_path, "--name", "x")
    _, err = _finish(proc)
    assert proc.returncode == 1
    assert "odw.env exists" in err and "Traceback" not in err
    assert (tmp_path / "odw.env").read_text() == "ODW_APP_ID=1\n"
    assert os.listdir(tmp_path) == ["odw.env"]
