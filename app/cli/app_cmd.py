"""`odw app ...`: operating the GitHub App (`odw app manifest`)."""

from __future__ import annotations

import argparse
import json

from app.cli.errors import UsageError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("app", help="operate the GitHub App")
    app_sub = p.add_subparsers(dest="app_command", metavar="COMMAND", required=True)
    m = app_sub.add_parser(
        "manifest", help="print the App manifest JSON for GitHub's registration flow"
    )
    m.add_argument(
        "--url", required=True, help="the service's public base URL (webhooks go to URL/webhooks)"
    )
    m.set_defaults(func=run_manifest)


def run_manifest(args: argparse.Namespace) -> int:
    from app.github.manifest import ManifestError, manifest

    try:
        data = manifest(args.url)
    except ManifestError as exc:
        raise UsageError(str(exc)) from None
    print(json.dumps(data, indent=2))
    return 0
