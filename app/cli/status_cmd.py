"""`odw status [OWNER/REPO] [--json]`: the App's runs in the terminal.

Reads the service's database (`ODW_DATABASE_URL` / `ODW_DATA_DIR`, as `odw
serve`), through `app.apphost.run_views`, the same views the dashboard
renders. `odw app status` prints the same text.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from typing import TYPE_CHECKING

from app.cli.commands import command_help
from app.cli.errors import UsageError
from app.local.view_text import plain

if TYPE_CHECKING:
    from app.apphost.run_views import RunLine, TaskLine


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("status", help=command_help("status"), description=command_help("status"))
    p.add_argument(
        "repository", metavar="OWNER/REPO", nargs="?", help="only this repository's runs"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run_status)


def run_status(args: argparse.Namespace) -> int:
    from app.apphost.run_views import list_runs
    from app.cli.app_cmd import service_store

    repo = args.repository
    if repo is not None and (repo.count("/") != 1 or not all(repo.split("/"))):
        raise UsageError(f"a repository is OWNER/REPO, got {repo!r}")
    store = service_store()
    try:
        runs = list_runs(store, repo)
    finally:
        store.close()
    if args.json:
        print(json.dumps([asdict(r) for r in runs]))
        return 0
    print_runs(runs, repo)
    return 0


def print_runs(runs: list[RunLine], repository: str | None = None) -> None:
    if not runs:
        print(f"odw: no runs of {repository} yet" if repository else "odw: no runs yet")
    for i, run in enumerate(runs):
        if i:
            print()
        for line in run_text(run):
            print(line)


def run_text(run: RunLine) -> list[str]:
    """A run as terminal lines: its head, the reason it stopped, its task counts,
    then a line per task and an indented line for each link or verdict. Text
    from outside ODW (reasons, verdicts, links) is made one plain line."""
    head = f"{run.repository}@{run.base}  {run.run_id}  {run.status}"
    lines = [head]
    if run.halted:
        lines.append(f"  halted: {plain(run.halted)}")
    lines.append(f"  tasks: {run.progress}")
    width = max((len(t.id) for t in run.tasks), default=0)
    for t in run.tasks:
        lines += task_text(t, width)
    return lines


def task_text(t: TaskLine, width: int) -> list[str]:
    attempts = " ".join(f"{stage}={n}" for stage, n in t.attempts.items()) or "-"
    lines = [f"  {t.id:<{width}}  {t.status:<12} {t.stage or '-':<14} attempts {attempts}"]
    pad = " " * (width + 4)
    if t.verdict is not None:
        v = t.verdict
        why = f": {plain(v.detail)}" if v.detail else ""
        lines.append(f"{pad}verdict {plain(v.stage)} attempt {v.attempt} {plain(v.outcome)}{why}")
    said = t.verdict.detail if t.verdict is not None else ""
    if t.status != "landed" and t.detail and t.detail != said:
        lines.append(f"{pad}{plain(t.detail)}")
    if t.assessment:
        lines.append(f"{pad}assessment {plain(t.assessment)}")
    if t.sha:
        lines.append(f"{pad}landed as {t.sha[:12]}")
    if t.pull_url:
        lines.append(f"{pad}pull request {plain(t.pull_url)}")
    return lines
