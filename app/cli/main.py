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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

SIGPIPE_EXIT = 141  # what a shell reports for a process ended by SIGPIPE


def terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`, without importing `shutil`."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    stdout = sys.__stdout__
    if stdout is None:
        return 80
    try:
        return os.get_terminal_size(stdout.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):  # closed, detached, or not a terminal
        return 80


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, given the terminal width rather than asking `shutil`.

    argparse makes a formatter for every `add_argument`; left to itself it
    imports `shutil` (and bz2 and lzma with it) for the width, about 2 ms of
    every odw process, `odw integrate` once per landing among them.
    """

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
        width: int | None = None,
    ) -> None:  # fmt: skip
        width = terminal_columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)


class Parser(argparse.ArgumentParser):
    """`ArgumentParser` with `HelpFormatter` by default; subcommand parsers inherit it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for the command in `argv`, or for none: every command listed, none imported.

    A command's own parser is all its run needs (its errors and help never list
    the other commands), so only `odw --help` and unknown commands build the list.
    """
    parser = Parser(prog="odw", description="Turn a roadmap into landed, reviewed commits.")
    parser.add_argument("--version", action="version", version=f"odw {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    args = list(sys.argv[1:] if argv is None else argv)
    wanted = args[0] if args and args[0] in COMMANDS else None
    if wanted is not None:
        importlib.import_module(COMMANDS[wanted][0]).register(sub)
        return parser
    for name, (_, help_text) in COMMANDS.items():
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
    if argv is None and getattr(args, "exit_at_once", False):
        exit_at_once(code)
    return code


def exit_at_once(code: int) -> NoReturn:
    """End the process now, its output flushed, without finalizing the interpreter.

    For a command run as the program (`odw integrate`, once per landing) that
    leaves nothing for finalization to do (no threads, atexit hooks, temporary
    files or unclosed writes; its locks go with the process): freeing every
    module costs it more than a git call.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
