"""`odw app run OWNER/REPO`, `odw app status` and `odw app manifest`: an
operator's handle on the App.

Both talk to the service's database only (the same `ODW_DATABASE_URL` /
`ODW_DATA_DIR` as `odw serve`): `run` records a start request that the
service's executor performs (reading `.github/odw.yml` and the roadmap at the
base's head), `status` lists the runs and their tasks.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from app.cli.commands import command_help
from app.cli.errors import UsageError, UserError

if TYPE_CHECKING:
    from app.store import Store


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("app", help=command_help("app"), description=command_help("app"))
    inner = p.add_subparsers(dest="app_command", metavar="COMMAND", required=True)
    run = inner.add_parser("run", help="start (or continue) a run of a repository's roadmap")
    run.add_argument("repository", metavar="OWNER/REPO")
    run.add_argument(
        "--base",
        help="the base branch (default: the repository's default branch, read from GitHub "
        "when the service starts the run)",
    )
    run.add_argument(
        "--installation",
        type=int,
        help="the App installation id (default: the one the service recorded for the repository)",
    )
    run.add_argument("--by", default="operator", help="who asks (shown on the run)")
    run.set_defaults(func=run_app_run)
    status = inner.add_parser("status", help="list the App's runs and their tasks")
    status.add_argument("--json", action="store_true", help="print JSON")
    status.set_defaults(func=run_app_status)
    manifest = inner.add_parser(
        "manifest", help="print the App manifest JSON for GitHub's registration flow"
    )
    manifest.add_argument(
        "--url", required=True, help="the service's public base URL (webhooks go to URL/webhooks)"
    )
    manifest.set_defaults(func=run_app_manifest)


def service_store() -> Store:
    """The service's database, as `odw serve` opens it."""
    from app.cli.serve_cmd import _settings, open_store

    return open_store(_settings())


def run_app_run(args: argparse.Namespace) -> int:
    from app.apphost import api
    from app.apphost.runs import RunKey, find_open

    repo = str(args.repository)
    if repo.count("/") != 1 or not all(repo.split("/")):
        raise UsageError(f"a repository is OWNER/REPO, got {repo!r}")
    store = service_store()
    try:
        installation = args.installation or store.installations.installation_for_repository(repo)
        if installation is None:
            raise UserError(
                f"the App is not installed on {repo} as far as this service knows "
                "(no installation event recorded); pass --installation ID"
            )
        key = RunKey(int(installation), repo, args.base or api.DEFAULT_BASE)
        open_id = find_open(store, key) if args.base else None
        api.request_start(store, key, by=args.by)
    finally:
        store.close()
    where = key.label() if args.base else f"{repo} (its default branch)"
    if open_id:
        print(f"odw app: run {open_id} is open for {where}; asked the service to continue it")
    else:
        print(f"odw app: asked the service to start a run for {where}")
    return 0


def run_app_status(args: argparse.Namespace) -> int:
    from app.apphost.run_views import is_app_run, list_runs, shown_status
    from app.cli.status_cmd import print_runs

    store = service_store()
    try:
        if not args.json:
            print_runs(list_runs(store))
            return 0
        views = [v for v in store.projections.runs() if is_app_run(v)]
    finally:
        store.close()
    shown = [shown_status(v.status, v.data.get("result") or {}) for v in views]
    print(
        json.dumps(
            [{"run": v.run_id, "status": s, **v.data} for v, s in zip(views, shown, strict=True)]
        )
    )
    return 0


def run_app_manifest(args: argparse.Namespace) -> int:
    from app.github.manifest import ManifestError, manifest

    try:
        data = manifest(args.url)
    except ManifestError as exc:
        raise UsageError(str(exc)) from None
    print(json.dumps(data, indent=2))
    return 0
