"""`odw` entry point: one module per command family, combined here.

Each command module exposes `register(subparsers)`; its handler returns the
process exit code. Errors a user can cause are typed and printed as one line.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from app import __version__
from app.cli import (
    init_cmd,
    integrate_cmd,
    roadmap_cmd,
    run_cmd,
    serve_cmd,
    simulate_cmd,
    stage_cmd,
)
from app.cli.errors import UsageError, UserError

COMMAND_MODULES = [
    roadmap_cmd,
    simulate_cmd,
    stage_cmd,
    init_cmd,
    integrate_cmd,
    serve_cmd,
    run_cmd,
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="odw", description="Turn a roadmap into landed, reviewed commits."
    )
    parser.add_argument("--version", action="version", version=f"odw {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except UsageError as exc:
        print(f"odw {args.command}: {exc}", file=sys.stderr)
        return 2
    except UserError as exc:
        print(f"odw {args.command}: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("odw: interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
