"""The App end to end: the fake GitHub, `odw serve` under gunicorn, a local "Actions".

`fake` is the stateful fake GitHub (every request checked against GitHub's
OpenAPI description); `sample` creates `octo/demo` with a roadmap, the
`odw init` workflow and `.github/odw.yml`; `service` runs the real service as
a subprocess on loopback with the App's credentials, and points the fake's
signed webhooks at it; `actions` runs each dispatched stage with the real
runner (`odw stage`) and the scripted example agent. The pieces live in
`harness.py` (shared with `make demo` and `make bench`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.apphost.harness import (
    AGENT,
    ODW_YML,
    ROADMAP,
    Service,
    app_env,
    install_sample,
    sample_files,
)
from tests.fakegithub import FakeGitHub
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.oracles import REST_OPENAPI, require_oracle
from tests.fakegithub.state import Repository
from tests.github.conftest import leaked_tokens


@pytest.fixture
def ghes() -> bool:
    """True: the fake refuses `return_run_details`, as GitHub Enterprise Server does."""
    return False


@pytest.fixture
def fake(tmp_path: Path, caplog: pytest.LogCaptureFixture, ghes: bool) -> Iterator[FakeGitHub]:
    require_oracle(REST_OPENAPI)
    caplog.set_level(logging.INFO)
    server = FakeGitHub(tmp_path / "github", ghes=ghes).start()
    try:
        yield server
    finally:
        server.stop()
    server.assert_no_violations()
    texts = {"a request URL": "\n".join(r["path"] + str(r["query"]) for r in server.requests)}
    serve_log = tmp_path / "service" / "serve.log"
    if serve_log.exists():
        texts["the service log"] = serve_log.read_text(errors="replace")
    assert not leaked_tokens(server, texts)


@pytest.fixture
def sample_spec() -> dict[str, Any]:
    """What `sample` creates; tests override it with their own roadmap or settings."""
    return {"roadmap": ROADMAP, "odw": ODW_YML}


@pytest.fixture
def service_env_extra() -> dict[str, str]:
    return {}


@pytest.fixture
def service(
    fake: FakeGitHub, tmp_path: Path, service_env_extra: dict[str, str]
) -> Iterator[Service]:
    data = tmp_path / "service"
    data.mkdir()
    env = app_env(
        fake,
        tmp_path,
        ODW_WORKERS="2",
        ODW_EXECUTORS="2",
        ODW_RETRY_BASE_SECONDS="0.2",
        **service_env_extra,
    )
    svc = Service(fake, data, env).start()
    try:
        yield svc
    finally:
        svc.stop()


@pytest.fixture
def sample(fake: FakeGitHub, service: Service, sample_spec: dict[str, Any]) -> Repository:
    """`octo/demo`, with the App installed (the service has recorded the installation)."""
    return install_sample(fake, service, sample_files(sample_spec["roadmap"], sample_spec["odw"]))


@pytest.fixture
def agent_script(tmp_path: Path) -> Path:
    """A SCRIPTED_AGENT_SCRIPT file tests fill in (`{}`: every stage passes)."""
    path = tmp_path / "agent-script" / "script.json"
    path.parent.mkdir()
    path.write_text("{}")
    return path


@pytest.fixture
def actions(fake: FakeGitHub, tmp_path: Path, agent_script: Path) -> Iterator[LocalActions]:
    env = {
        "SCRIPTED_AGENT_SCRIPT": str(agent_script),
        "SCRIPTED_AGENT_STATE": str(agent_script.parent / "state"),
    }
    runner = LocalActions(fake, tmp_path / "actions", AGENT, env=env).start()
    try:
        yield runner
    finally:
        runner.stop()
    assert not runner.errors, runner.errors
