"""`odw app run OWNER/REPO`, `odw app status`, `odw app manifest` and `odw
app register` (in `app_register`): an operator's handle on the App.

Both talk to the service's database (the same `ODW_DATABASE_URL` /
`ODW_DATA_DIR` as `odw serve`): `run` records a start request that the
service's executor performs (reading `.github/odw.yml` and the roadmap at the
base's head), only while the service's heartbeat says it is there, and asks
GitHub for the installation when none was recorded; `status` lists the runs
and their tasks.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from app.cli.commands import command_help
from app.cli.errors import UsageError, UserError

if TYPE_CHECKING:
    from app.github import GitHubApp
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
    from app.cli.app_register import add_parser

    add_parser(inner)


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
        _require_service(store)
        installation = args.installation or store.installations.installation_for_repository(repo)
        if installation is None:
            installation = _installation_from_github(repo)
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


def _require_service(store: Store) -> None:
    """A UserError unless a service that runs the App reads this database now
    (its heartbeat, `Store.heartbeats`): a request nobody reads is not recorded."""
    live = store.heartbeats.live()
    if not live:
        raise UserError(
            f"no ODW service is reading {store.describe()}; start it with `odw serve` "
            "(with the same ODW_DATABASE_URL or ODW_DATA_DIR)"
        )
    if not any(h.acts_on_runs for h in live):
        raise UserError(
            f"the ODW service reading {store.describe()} does not run the App: it has no "
            "ODW_APP_ID and ODW_PRIVATE_KEY (or ODW_PRIVATE_KEY_PATH); set them and restart it"
        )


def _installation_from_github(repo: str) -> int:
    """The App's installation on `repo`, asked of GitHub with the App's JWT
    (`GET /repos/{owner}/{repo}/installation`) when no installation event was recorded."""
    from app.cli.serve_cmd import _settings
    from app.github import GitHubApp
    from app.github.auth import CredentialsError
    from app.github.errors import GitHubError, NotFound

    try:
        github = GitHubApp.from_settings(_settings())
        return github.installation_of(repo)
    except CredentialsError as exc:
        raise UserError(
            f"no installation of the App on {repo} is recorded and GitHub cannot be asked: "
            f"{exc}; or pass --installation ID"
        ) from None
    except NotFound:
        raise UserError(
            f"the App is not installed on {repo} (GitHub answered 404): install it there "
            f"from {_install_page(github)}"
        ) from None
    except GitHubError as exc:
        raise UserError(f"cannot ask GitHub for the App's installation on {repo}: {exc}") from None


def _install_page(github: GitHubApp) -> str:
    from app.github.errors import GitHubError

    try:
        github.identify()
    except GitHubError:
        return "the App's page on GitHub"
    return f"{github.html_url}/installations/new"


def run_app_status(args: argparse.Namespace) -> int:
    from app.apphost.run_views import is_app_run, list_runs, shown_status
    from app.cli.status_cmd import print_runs

    store = service_store()
    try:
        if not args.json:
            if not store.heartbeats.live():
                print(
                    "odw app: no ODW service is reading this database; start it with `odw serve`",
                    file=sys.stderr,
                )
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
