"""`odw roadmap` and `odw next`: read a roadmap, report problems and the frontier."""

from __future__ import annotations

import argparse
import contextlib
import gc
from collections.abc import Iterator
from pathlib import Path

from app.cli.commands import command_help
from app.cli.errors import UserError
from app.cli.output import print_json, table
from app.cli.roadmap_cache import read_roadmap
from app.core.roadmap import Problem, Roadmap
from app.core.selection import Blocked, frontier

DEFAULT_ROADMAP = "docs/roadmap.md"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("roadmap", help=command_help("roadmap"))
    p.add_argument("path", nargs="?", default=DEFAULT_ROADMAP, metavar="PATH")
    p.add_argument("--json", action="store_true", help="print JSON")
    # Run as the program, it ends without finalizing the interpreter (`main.exit_at_once`):
    # freeing a large roadmap object by object costs more than a cached read.
    p.set_defaults(func=run_roadmap, exit_at_once=True)

    n = sub.add_parser("next", help=command_help("next"))
    n.add_argument("path", nargs="?", default=DEFAULT_ROADMAP, metavar="PATH")
    n.add_argument(
        "--taken",
        action="append",
        default=[],
        metavar="ID",
        help="id taken by a live attempt (repeatable)",
    )
    n.add_argument(
        "--held",
        action="append",
        default=[],
        metavar="ID",
        help="id held by a surviving branch (repeatable)",
    )
    n.add_argument("--json", action="store_true", help="print JSON")
    n.set_defaults(func=run_next, exit_at_once=True)


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No garbage collection while a one-shot command reads and reports a roadmap.

    Reading 5,000 tasks makes some 100,000 objects and no reference cycles, so the
    collector's passes over them (a sixth of `odw next`) would free nothing.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_roadmap(path: str) -> Roadmap:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read roadmap {path}: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UserError(f"cannot read roadmap {path}: not UTF-8 text ({exc.reason})") from None
    return read_roadmap(path, text.removeprefix("\ufeff"))


def _problems(roadmap: Roadmap) -> list[str]:
    def fmt(level: str, p: Problem) -> str:
        return f"{level} [{p.kind}] {p.message}"

    return [fmt("error", p) for p in roadmap.errors] + [fmt("warning", p) for p in roadmap.warnings]


def run_roadmap(args: argparse.Namespace) -> int:
    with _collector_paused():
        return _run_roadmap(args)


def _run_roadmap(args: argparse.Namespace) -> int:
    roadmap = load_roadmap(args.path)
    if args.json:
        print_json(roadmap.to_json())
    else:
        rows = [
            [
                t.id,
                "done" if t.done else "open",
                str(t.line),
                ", ".join([*t.requires, *(f"{e} (external)" for e in t.external)]) or "-",
                (f"(addendum of {t.addendum_of}) " if t.addendum_of else "") + t.title,
            ]
            for t in roadmap.tasks
        ]
        print(table(["ID", "STATE", "LINE", "REQUIRES", "TITLE"], rows))
        for line in _problems(roadmap):
            print(line)
    return 0 if not roadmap.errors else 2


def _waiting_for(b: Blocked) -> str:
    if not b.external:
        return ", ".join(b.missing)
    return ", ".join([*b.missing, *(f"{e} (external)" for e in b.external)])


def run_next(args: argparse.Namespace) -> int:
    with _collector_paused():
        return _run_next(args)


def _run_next(args: argparse.Namespace) -> int:
    roadmap = load_roadmap(args.path)
    result = frontier(roadmap, taken=args.taken, held=args.held)
    if args.json:
        out = result.to_json()
        out["errors"] = [p.to_json() for p in roadmap.errors]
        out["warnings"] = [p.to_json() for p in roadmap.warnings]
        print_json(out)
    else:
        if not roadmap.valid:
            print("nothing is scheduled from a roadmap with duplicate task ids")
        ready_rows = [[c.id, c.kind, c.branch, ", ".join(c.subtasks) or "-"] for c in result.ready]
        print(table(["READY", "KIND", "BRANCH", "SUBTASKS"], ready_rows))
        print()
        waiting = [[b.id, _waiting_for(b)] for b in result.blocked]
        print(table(["BLOCKED", "WAITING FOR"], waiting, width=100))
        for line in _problems(roadmap):
            print(line)
    return 0 if not roadmap.errors else 2
