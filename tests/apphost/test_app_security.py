"""The App's security promises end to end: the real service under gunicorn,
signed webhooks from the fake GitHub, stages run by the real runner.

- the auth preflight fails closed and the run check says what to grant;
- no credential (installation tokens, the webhook secret, the private key, the
  admin token, a token in the runner's environment) appears in a log, a
  child's command line, a comment, a check run, a pull request, a commit, an
  artifact, a mirror or any file the service or the runner wrote.
"""

from __future__ import annotations

import secrets
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.github.manifest import load as load_manifest
from app.gitops.runner import git
from tests.apphost.harness import REPO, Service, install_sample, sample_files, wait_until
from tests.conftest import REPO_ROOT
from tests.fakegithub import FakeGitHub
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.state import Repository
from tests.leakscan import CmdlineSampler, leaks

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]

ONE_TASK = "# Roadmap\n\n## 1. Demo\n\n- [ ] 1.1. Add a greeting\n"
ODW = {"gates": ["test -d work"], "config": {"maxParallel": 1}}
ADMIN = f"odwscanadmin{secrets.token_hex(8)}"
RUNNER_TOKEN = f"odwscanrunnerenv{secrets.token_hex(8)}"
SCRIPTED = REPO_ROOT / "examples" / "agents" / "scripted_agent.py"
# Dumps its environment into its log and into the work it commits.
LEAKY_AGENT = f"env; env > env-dump.txt; {sys.executable} {SCRIPTED}"


@pytest.fixture
def service_env_extra() -> dict[str, str]:
    return {"ODW_ADMIN_TOKEN": ADMIN}


def _installed(fake: FakeGitHub, service: Service, permissions: dict[str, str]) -> Repository:
    return install_sample(fake, service, sample_files(ONE_TASK, ODW), permissions)


def _run_result(service: Service) -> dict[str, Any]:
    runs = service.runs()
    return (runs[0].get("result") or {}) if runs else {}


def test_app_preflight_without_dispatch_permission_starts_nothing_and_says_what_to_grant(
    fake: FakeGitHub, service: Service
) -> None:
    granted = {
        "actions": "read",
        "checks": "write",
        "contents": "write",
        "issues": "write",
        "metadata": "read",
        "pull_requests": "write",
    }
    repo = _installed(fake, service, granted)
    service.run_app()
    halted = wait_until("the run to halt", lambda: _run_result(service).get("halted"), timeout=60)
    assert "grant actions: write (dispatch the stage workflow)" in halted
    assert _run_result(service)["recovery"]["blocked"].startswith("auth-preflight-failed")
    run_check = wait_until(
        "the run check",
        lambda: [c for c in fake.check_runs.values() if c.name == "ODW · run"],
        timeout=60,
    )[-1]
    wait_until("the run check to show the halt", lambda: "grant actions" in str(run_check.output))
    assert run_check.conclusion in ("action_required", "failure")
    dispatches = [r for r in fake.requests if r["path"].endswith("/dispatches")]
    assert dispatches == [] and fake.runs == {}
    assert set(repo.git.refs()) == {"refs/heads/main"}, "a branch was created"
    assert not fake.pulls


@pytest.fixture
def leaky_actions(fake: FakeGitHub, tmp_path: Path) -> Iterator[LocalActions]:
    state = tmp_path / "agent-state"
    state.mkdir()
    script = state / "script.json"
    script.write_text("{}")
    env = {
        "SCRIPTED_AGENT_SCRIPT": str(script),
        "SCRIPTED_AGENT_STATE": str(state),
        "GITHUB_TOKEN": RUNNER_TOKEN,
    }
    runner = LocalActions(fake, tmp_path / "actions", LEAKY_AGENT, env=env).start()
    try:
        yield runner
    finally:
        runner.stop()


def _fake_texts(fake: FakeGitHub) -> dict[str, bytes]:
    texts: dict[str, bytes] = {}
    for c in fake.comments.values():
        texts[f"comment {c.id}"] = c.body.encode()
    for r in fake.check_runs.values():
        texts[f"check run {r.name}"] = repr((r.output, r.actions, r.details_url)).encode()
    for p in fake.pulls.values():
        texts[f"pull {p.number}"] = f"{p.title}\n{p.body}".encode()
    for a in fake.artifacts.values():
        texts[f"artifact {a.id}"] = a.data
    for run in fake.runs.values():
        texts[f"workflow run {run.id}"] = repr(run).encode()
    for name, repo in fake.repos.items():
        texts[f"{name} history"] = repo.git.git("log", "--all", "-p", "--format=%H%n%B").encode()
    return texts


def test_app_end_to_end_leaks_no_credential_anywhere(
    fake: FakeGitHub, service: Service, leaky_actions: LocalActions, tmp_path: Path
) -> None:
    repo = _installed(fake, service, dict(fake_default_permissions()))
    with CmdlineSampler() as sampler:
        service.run_app()
        wait_until(
            "the task to land",
            lambda: (
                "ODW-Task: 1.1" in repo.git.git("log", "--format=%B", "refs/heads/main")
                or _run_result(service).get("halted")
            ),
            timeout=240,
        )
    assert "ODW-Task: 1.1" in repo.git.git("log", "--format=%B", "refs/heads/main"), _run_result(
        service
    )
    # The agent did dump its environment, and the dump landed.
    assert b"ODW_TASK_ID=1.1" in (repo.git.show("refs/heads/main", "env-dump.txt") or b"")
    assert leaky_actions.errors == []
    key_body = "".join(fake.private_key_pem.splitlines()[1:-1])
    credentials = {
        **{f"installation token {t[:8]}": t for t in fake.issued},
        "the webhook secret": fake.webhooks.secret,
        "the App's private key": key_body[:64],
        "the admin token": ADMIN,
        "a token in the runner's environment": RUNNER_TOKEN,
    }
    assert len(fake.issued) >= 2
    written: dict[str, bytes] = {
        str(p): p.read_bytes()
        for p in tmp_path.rglob("*")
        if p.is_file()
        and not p.is_symlink()
        and "github" not in p.relative_to(tmp_path).parts[:1]  # the fake's own state
        and not p.name.endswith(".pem")  # the App's key file itself
    }
    written.update(_fake_texts(fake))
    written["the service log"] = service.log().encode()
    for mirror in (tmp_path / "service").rglob("*.git"):
        if (mirror / "HEAD").is_file():
            written[f"{mirror} history"] = git(mirror, "log", "--all", "-p").stdout.encode()
    for i, cmdline in enumerate(sampler.seen):
        written[f"cmdline #{i}"] = cmdline
    assert leaks(credentials, written) == []


def fake_default_permissions() -> dict[str, str]:
    return dict(load_manifest()["default_permissions"])


def test_a_fork_pull_requests_odw_run_starts_nothing_and_is_answered_with_the_reason(
    fake: FakeGitHub, service: Service
) -> None:
    repo = _installed(fake, service, fake_default_permissions())
    fake.add_collaborator(REPO, "maintainer", "write")
    pull = fake.open_fork_pull(REPO, "mallory/demo", "patch-1", "mallory", {"evil.sh": "x"})
    command = fake.comment_as("maintainer", REPO, pull.number, "/odw run")
    reply = wait_until(
        "ODW's answer",
        lambda: [
            c for c in fake.comments.values()
            if c.number == pull.number and c.user == fake.bot_login and c.id != command.id
        ],
        timeout=60,
    )[0]  # fmt: skip
    assert "fork" in reply.body and "mallory/demo" in reply.body
    assert "Nothing was changed" in reply.body
    assert service.runs() == []
    assert not [r for r in fake.requests if r["path"].endswith("/dispatches")]
    assert not [r for r in fake.requests if r["method"] == "POST" and r["path"].endswith("/pulls")]
    assert {r for r in repo.git.refs() if r.startswith("refs/heads/")} == {"refs/heads/main"}


def test_a_command_from_a_reader_starts_nothing_and_is_answered_with_the_refusal(
    fake: FakeGitHub, service: Service
) -> None:
    _installed(fake, service, fake_default_permissions())
    fake.add_collaborator(REPO, "reader", "read")
    issue = fake.open_issue(REPO)
    command = fake.comment_as("reader", REPO, issue, "/odw run")
    reply = wait_until(
        "ODW's answer",
        lambda: [
            c for c in fake.comments.values()
            if c.number == issue and c.user == fake.bot_login and c.id != command.id
        ],
        timeout=60,
    )[0]  # fmt: skip
    assert "has `read` permission" in reply.body and "needs `write`" in reply.body
    assert "Nothing was changed" in reply.body
    assert service.runs() == []
    assert not [r for r in fake.requests if r["path"].endswith("/dispatches")]
