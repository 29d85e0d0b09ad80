"""`odw` entry point: one module per command family, imported only when run.

Each command module exposes `register(subparsers)`; its handler returns the
process exit code. Errors a user can cause are typed and printed as one line;
an ordinary condition (a closed pipe, Ctrl-C) never prints a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from app import __version__
from app.cli.commands import COMMANDS
from app.cli.errors import UsageError, UserError

SIGPIPE_EXIT = 141  # what a shell reports for a process ended by SIGPIPE


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The full parser for the command in `argv`; the others are listed, not imported."""
    parser = argparse.ArgumentParser(
        prog="odw", description="Turn a roadmap into landed, reviewed commits."
    )
    parser.add_argument("--version", action="version", version=f"odw {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    args = list(sys.argv[1:] if argv is None else argv)
    wanted = args[0] if args and args[0] in COMMANDS else None
    module = COMMANDS[wanted][0] if wanted else None
    for name, (owner, help_text) in COMMANDS.items():
        if owner == module:
            if name == wanted:
                importlib.import_module(owner).register(sub)
        else:
            sub.add_parser(name, help=help_text, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
        sys.stdout.flush()
    except UsageError as exc:
        print(f"odw {args.command}: {exc}", file=sys.stderr)
        return 2
    except UserError as exc:
        print(f"odw {args.command}: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        # The reader went away (`odw next | head`): stop quietly, as `cat` does.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return SIGPIPE_EXIT
    except KeyboardInterrupt:
        print("odw: interrupted", file=sys.stderr)
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
