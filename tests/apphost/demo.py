"""`make demo`: the whole App on this machine, no GitHub account needed.

Starts the fake GitHub, the real service (`odw serve`, SQLite) and a local
"Actions" that runs each dispatched stage with the real runner (`odw stage`)
and the scripted example agent; installs the App on `octo/demo` with a small
roadmap, asks for a run (`odw app run octo/demo`, as an operator would), and
prints what GitHub shows as it happens and at the end: the run's check, each
pull request with its comments, each task's check run, and the squash commits
on the base; `--dashboard-shot FILE` saves the run's dashboard page as a
PNG at the end. The options make it a rehearsal of a maintainer's own scenario
(their roadmap, `.github/odw.yml`, files such as a `Makefile`, an agent script,
comments typed on the pull request); `demo_scenario.py` reads them.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import signal
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any, NoReturn

from tests.apphost.demo_scenario import (
    Comment,
    Scenario,
    ScenarioError,
    config_text,
    scenario_from,
    target_task,
)
from tests.apphost.harness import AGENT, REPO, Service, app_env, wait_until
from tests.browser import shoot
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.actions_runner import LocalActions
from tests.fakegithub.oracles import REST_OPENAPI

ROADMAP = """\
# Roadmap

## 1. Demo

- [ ] 1.1. Add a greeting
  - Success: `work/1-1.txt` says hello.
- [ ] 1.2. Add a farewell
  - Requires 1.1.
- [ ] 1.3. Add a changelog
"""
QUIET_SECONDS = 1.5  # no REST request for this long, nothing queued: the run went quiet


def say(text: str = "") -> None:
    print(text, flush=True)


def block(title: str, body: str) -> None:
    say(f"\n--- {title} " + "-" * max(0, 66 - len(title)))
    say(textwrap.indent(body.strip(), "  "))


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise ScenarioError(message)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="make demo", description=(__doc__ or "").splitlines()[0])
    add = parser.add_argument
    add("--roadmap", type=Path, metavar="FILE", help="the roadmap (docs/roadmap.md)")
    add("--config", type=Path, metavar="FILE", help="the repository's .github/odw.yml")
    add("--files", type=Path, metavar="DIR", help="more files for the repository (a Makefile...)")
    add("--agent-script", type=Path, metavar="FILE", help="the scripted agent's script (JSON)")
    add(
        "--comment",
        action="append",
        default=[],
        metavar="LOGIN:PERMISSION:TEXT",
        help="posted in order on the first failed task's pull request (else the first "
        "task's), each once the run is quiet; LOGIN becomes a collaborator with "
        "PERMISSION (read, triage, write, maintain, admin); \\n in TEXT is a new line",
    )
    add("--request-log", type=Path, metavar="FILE", help="write each REST request as JSON lines")
    add("--keep", type=Path, metavar="DIR", help="keep the fake's repositories and the DB here")
    add(
        "--dashboard-shot",
        type=Path,
        metavar="FILE",
        help="at the end, save a PNG of the run's dashboard page (needs `make browser`)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        scenario = scenario_from(_parser().parse_args(argv), ROADMAP)
    except ScenarioError as exc:
        print(f"make demo: {exc}", file=sys.stderr)
        return 2
    if not REST_OPENAPI.is_file():
        print(
            "make demo: GitHub's OpenAPI description is missing: run `make oracles` (needs npm)",
            file=sys.stderr,
        )
        return 2
    # `timeout`, `kill`: stop the service and the fake on the way out, as Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    root = scenario.keep or Path(tempfile.mkdtemp(prefix="odw-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    if scenario.request_log is not None:
        # The fake appends each request it answers there (tests/fakegithub/server.py).
        os.environ["ODW_FAKE_GITHUB_REQUEST_LOG"] = str(scenario.request_log)
    try:
        return _rehearse(scenario, root)
    finally:
        if scenario.keep is None:
            shutil.rmtree(root, ignore_errors=True)


def _rehearse(scenario: Scenario, root: Path) -> int:
    fake = FakeGitHub(root / "github").start()
    data = root / "service"
    data.mkdir(exist_ok=True)
    admin = secrets.token_hex(16)  # the dashboard's sign-in, for --dashboard-shot
    env = app_env(fake, root, ODW_LOG_LEVEL="WARNING", ODW_ADMIN_TOKEN=admin)
    service = Service(fake, data, env)
    agent_env = {"SCRIPTED_AGENT_STATE": str(root / "agent-state")}
    if scenario.agent_script is not None:
        agent_env["SCRIPTED_AGENT_SCRIPT"] = str(scenario.agent_script)
    actions = LocalActions(fake, root / "actions", AGENT, env=agent_env)
    try:
        say(f"fake GitHub:   {fake.api_url} (REST), {fake.host_url} (git)")
        service.start()
        say(f"ODW service:   {service.url} (odw serve, SQLite in {data})")
        actions.start()
        script = f", script {scenario.agent_script}" if scenario.agent_script else ""
        say(f"local Actions: runs `odw stage` with examples/agents/scripted_agent.py{script}")
        fake.create_repository(REPO, scenario.files)
        fake.install("octo", [REPO])
        say(f"installed the App on {REPO}: {len(scenario.files)} files, gates "
            f"{config_text(scenario.files)}; roadmap:\n")  # fmt: skip
        say(textwrap.indent(scenario.roadmap, "    "))
        store = service.store()
        wait_until(
            "the installation", lambda: store.installations.installation_for_repository(REPO)
        )
        store.close()
        say(f"$ odw app run {REPO}")
        say("  " + service.run_app().strip())
        quiet = _follow(fake, service, {})
        shown = _report(fake, {})
        for comment in scenario.comments:
            if not quiet:
                break
            quiet = _post(fake, service, comment)
            shown = _report(fake, shown)
        _closing(fake, scenario)
        shot = scenario.dashboard_shot is None or _shoot(service, admin, scenario.dashboard_shot)
        return 0 if quiet and shot else 1
    finally:
        actions.stop()
        service.stop()
        fake.stop()


def _shoot(service: Service, admin: str, out: Path) -> bool:
    """A PNG of the run's page on the dashboard, signed in with the admin token;
    False (said in one line) when there was no run or the browser failed."""
    runs = service.runs()
    if not runs:
        print("make demo: no run to show on the dashboard; no screenshot", file=sys.stderr)
        return False
    try:
        shoot(service.url, admin, f"/dashboard/runs/{runs[0]['run']}", out)
    except Exception as exc:  # the browser's own errors: one line, no traceback
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        print(f"make demo: could not save the dashboard screenshot: {first}", file=sys.stderr)
        return False
    say(f"dashboard of run {runs[0]['run']}: {out}")
    return True


def _post(fake: FakeGitHub, service: Service, comment: Comment) -> bool:
    """`comment` on the target task's pull request, its author a collaborator; then
    follow the run until it is quiet again."""
    runs = service.runs()
    results = list(((runs[0].get("result") or {}) if runs else {}).get("results", []))
    task = target_task(results)
    pull = _pull_of(fake, task) if task else None
    if pull is None:
        where = f"task {task} has no pull request" if task else "the run has no task"
        say(f"\n({where} to comment on; skipped {comment.login}'s {comment.text!r})")
        return True
    fake.add_collaborator(REPO, comment.login, comment.permission)
    say(f"\n$ {comment.login} ({comment.permission}) comments on PR #{pull.number} ({task}):")
    say(textwrap.indent(comment.text, "    "))
    fake.comment_as(comment.login, REPO, pull.number, comment.text)
    return _follow(fake, service, _statuses(runs))


def _pull_of(fake: FakeGitHub, task: str) -> s.PullRequest | None:
    """The task's pull request: the one whose status comment is the task's
    (`<!-- odw:status v1 task=ID -->`), else the one titled `ODW ID: ...`."""
    marker = f" task={task} -->"
    statuses = [c for c in list(fake.comments.values()) if c.body.startswith("<!-- odw:status")]
    numbers = sorted(c.number for c in statuses if marker in c.body.splitlines()[0])
    titled = [p for p in list(fake.pulls.values()) if p.title.startswith(f"ODW {task}:")]
    numbers = numbers or sorted(p.number for p in titled)
    return fake.pulls.get((REPO, numbers[0])) if numbers else None


def _statuses(runs: list[dict[str, Any]]) -> dict[str, str]:
    result = (runs[0].get("result") or {}) if runs else {}
    return {
        t["id"]: t["status"] + (f" ({t['stage']})" if t["status"] == "running" else "")
        for t in result.get("results", [])
    }


def _follow(fake: FakeGitHub, service: Service, seen: dict[str, str], timeout: float = 600) -> bool:
    """Print each task's status as it changes, until the run is quiet: every
    webhook handled, nothing left to do or running on Actions, and no REST
    request for `QUIET_SECONDS`. False when it never went quiet."""
    deadline = time.monotonic() + timeout
    last, since = -1, time.monotonic()
    while time.monotonic() < deadline:
        runs = service.runs()
        for task, now in _statuses(runs).items():
            if seen.get(task) != now:
                seen[task] = now
                say(f"  task {task:<5} {now}")
        count = len(fake.requests)
        if count != last:
            last, since = count, time.monotonic()
        busy = any(r.status != "completed" for r in list(fake.runs.values()))
        if not busy and time.monotonic() - since >= QUIET_SECONDS and service.settled():
            return True
        time.sleep(0.3)
    say("the run did not go quiet in time")
    return False


def _views(fake: FakeGitHub) -> dict[str, tuple[str, str]]:
    """What a maintainer sees on GitHub, by place: heading and text of each.
    (Each dict is copied in one step: the fake's threads add to them meanwhile.)"""
    views: dict[str, tuple[str, str]] = {}
    checks = sorted(fake.check_runs.values(), key=lambda c: c.id)
    latest: dict[str, s.CheckRun] = {c.name: c for c in checks}  # the newest of each name
    for name in sorted(latest, key=lambda n: (n != "ODW · run", latest[n].id)):
        c = latest[name]
        state = c.conclusion or c.status
        text = f"{c.output.get('title', '')}\n\n{c.output.get('summary', '')}".strip()
        views[f"check {name}"] = (f"check run `{name}`: {state}", text)
    comments = sorted(fake.comments.values(), key=lambda c: c.id)
    for pull in sorted(fake.pulls.values(), key=lambda p: p.number):
        state = "merged" if pull.merged else pull.state + (" draft" if pull.draft else "")
        parts = [_comment_text(c) for c in comments if c.number == pull.number]
        views[f"pr {pull.number}"] = (
            f"PR #{pull.number} {pull.title} [{state}]",
            "\n\n".join(parts) or "(no comment)",
        )
    return views


def _comment_text(c: s.Comment) -> str:
    edited = f", edited {c.edits}x" if c.edits else ""
    reactions = ", ".join(content for _, content in c.reactions)
    seen = f"\n  reactions: {reactions}" if reactions else ""
    return f"@{c.user}{edited}:{seen}\n{c.body}"


def _report(fake: FakeGitHub, shown: dict[str, tuple[str, str]]) -> dict[str, tuple[str, str]]:
    """Print each view that changed since `shown` (all of them the first time)."""
    views = _views(fake)
    changed = [k for k, v in views.items() if shown.get(k) != v]
    if shown and not changed:
        say("  (nothing changed on GitHub)")
    for key in changed:
        block(*views[key])
    return views


def _closing(fake: FakeGitHub, scenario: Scenario) -> None:
    repo = fake.repos[REPO]
    log = repo.git.git("log", "--format=%h %s", "refs/heads/main")
    block("git log main (one squash commit per task)", log)
    roadmap = (repo.git.show("refs/heads/main", "docs/roadmap.md") or b"").decode()
    block("docs/roadmap.md on main", roadmap)
    say(f"\n{len(fake.requests)} REST requests to the fake, none outside GitHub's OpenAPI: "
        f"{'yes' if not fake.violations else 'NO: ' + '; '.join(fake.violations[:3])}")  # fmt: skip
    if scenario.request_log is not None:
        say(f"request log (JSON lines): {scenario.request_log}")
    if scenario.keep is not None:
        say(f"kept: {scenario.keep} (github/ repositories, service/ database and log)")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # the services are stopped on the way out
        print("\nmake demo: interrupted", file=sys.stderr)
        sys.exit(130)
    except BrokenPipeError:  # `make demo | head`: the reader left
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
