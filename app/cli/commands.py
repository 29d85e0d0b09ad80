"""Which module implements each `odw` command, and its one-line help.

`odw --help` lists commands from this table alone; only the module of the
command being run is imported, so no command pays for another's imports.
"""

from __future__ import annotations

COMMANDS: dict[str, tuple[str, str]] = {
    "roadmap": ("app.cli.roadmap_cmd", "parse a roadmap and report its tasks and problems"),
    "next": ("app.cli.roadmap_cmd", "list the tasks ready to start and what blocks the rest"),
    "simulate": (
        "app.cli.simulate_cmd",
        "run the orchestration core against scripted stage outcomes",
    ),
    "stage": (
        "app.cli.stage_cmd",
        "run one stage attempt with a coding agent and write its verdict",
    ),
    "init": ("app.cli.init_cmd", "write the stage workflow, .github/odw.yml and a starter roadmap"),
    "integrate": (
        "app.cli.integrate_cmd",
        "squash-merge a task branch onto the base with fetch-rebase-retry",
    ),
    "serve": ("app.cli.serve_cmd", "run the webhook service under gunicorn"),
    "intake": ("app.cli.serve_cmd", "store deliveries for odw serve (started by odw serve)"),
    "worker": ("app.cli.serve_cmd", "process stored deliveries (no HTTP)"),
    "db": ("app.cli.serve_cmd", "database schema commands"),
    "run": ("app.cli.run_cmd", "run the roadmap of a local clone end to end (local mode)"),
    "app": (
        "app.cli.app_cmd",
        "operate the GitHub App (manifest, run OWNER/REPO, status)",
    ),
    "status": ("app.cli.status_cmd", "show the App's runs and their tasks [of OWNER/REPO]"),
}


def command_help(name: str) -> str:
    return COMMANDS[name][1]
