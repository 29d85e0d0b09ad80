"""`make demo`: the whole App on this machine, no GitHub account needed.

Starts the fake GitHub, the real service (`odw serve`, SQLite) and a local
"Actions" that runs each dispatched stage with the real runner (`odw stage`)
and the scripted example agent; installs the App on `octo/demo` with a small
roadmap, asks for a run (`odw app run octo/demo`, as an operator would), and
prints what GitHub shows as it happens and at the end: the run's check table,
each pull request with its status comment, each task's check run, and the
squash commits on the base. `--keep DIR` keeps everything under DIR.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from tests.apphost.harness import (
    AGENT,
    ODW_YML,
    REPO,
    Service,
    app_env,
    sample_files,
    wait_until,
)
from tests.fakegithub import FakeGitHub
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


def say(text: str = "") -> None:
    print(text, flush=True)


def block(title: str, body: str) -> None:
    say(f"\n--- {title} " + "-" * max(0, 66 - len(title)))
    say(textwrap.indent(body.strip(), "  "))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make demo", description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="keep the fake's repositories and the DB here")
    args = parser.parse_args(argv)
    if not REST_OPENAPI.is_file():
        say("make demo: GitHub's OpenAPI description is missing: run `make oracles` (needs npm)")
        return 2
    root = args.keep or Path(tempfile.mkdtemp(prefix="odw-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    fake = FakeGitHub(root / "github").start()
    data = root / "service"
    data.mkdir(exist_ok=True)
    env = app_env(fake, root, ODW_LOG_LEVEL="WARNING")
    service = Service(fake, data, env)
    actions = LocalActions(fake, root / "actions", AGENT)
    try:
        say(f"fake GitHub:   {fake.api_url} (REST), {fake.host_url} (git)")
        service.start()
        say(f"ODW service:   {service.url} (odw serve, SQLite in {data})")
        actions.start()
        say("local Actions: runs `odw stage` with examples/agents/scripted_agent.py")
        fake.create_repository(REPO, sample_files(ROADMAP, ODW_YML))
        fake.install("octo", [REPO])
        say(f"installed the App on {REPO}; roadmap:\n")
        say(textwrap.indent(ROADMAP, "    "))
        store = service.store()
        wait_until(
            "the installation", lambda: store.installations.installation_for_repository(REPO)
        )
        store.close()
        say(f"$ odw app run {REPO}")
        say("  " + service.run_app().strip())
        _follow(service)
        _report(fake, service)
    finally:
        actions.stop()
        service.stop()
        fake.stop()
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    return 0


def _follow(service: Service, timeout: float = 600) -> None:
    """Print each task's status as it changes, until the run finishes."""
    seen: dict[str, str] = {}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = service.runs()
        if runs:
            result = runs[0].get("result") or {}
            for t in result.get("results", []):
                now = f"{t['status']}" + (f" ({t['stage']})" if t["status"] == "running" else "")
                if seen.get(t["id"]) != now:
                    seen[t["id"]] = now
                    say(f"  task {t['id']:<5} {now}")
            if runs[0]["status"] == "finished":
                time.sleep(1.5)  # the last views (PRs closed, checks concluded)
                return
        time.sleep(0.5)
    say("the run did not finish in time")


def _report(fake: FakeGitHub, service: Service) -> None:
    repo = fake.repos[REPO]
    checks = sorted(fake.check_runs.values(), key=lambda c: c.id)
    run_check = [c for c in checks if c.name == "ODW · run"]
    if run_check:
        c = run_check[-1]
        block(
            f"check run `{c.name}` on main: {c.conclusion}",
            f"{c.output.get('title', '')}\n\n{c.output.get('summary', '')}",
        )
    for pull in sorted(fake.pulls.values(), key=lambda p: p.number):
        comments = [c for c in fake.comments.values() if c.number == pull.number]
        state = "merged" if pull.merged else pull.state
        body = "\n\n".join(f"(edited {c.edits}x)\n{c.body}" for c in comments)
        block(f"PR #{pull.number} {pull.title} [{state}]", body or "(no comment)")
    latest: dict[str, object] = {}
    for c in checks:
        if c.name != "ODW · run":
            latest[c.name] = c
    for name, c in latest.items():
        block(f"check run `{name}`: {c.conclusion}", c.output.get("title", ""))  # type: ignore[attr-defined]
    log = repo.git.git("log", "--format=%h %s", "refs/heads/main")
    block("git log main (one squash commit per task)", log)
    roadmap = (repo.git.show("refs/heads/main", "docs/roadmap.md") or b"").decode()
    block("docs/roadmap.md on main", roadmap)
    say(f"\n{len(fake.requests)} REST requests to the fake, none outside GitHub's OpenAPI: "
        f"{'yes' if not fake.violations else 'NO: ' + '; '.join(fake.violations[:3])}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
