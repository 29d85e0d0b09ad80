"""`odw integrate`: land one task branch on the base as a single squash commit."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from app.cli.commands import command_help
from app.cli.errors import UsageError, UserError
from app.cli.output import print_json
from app.core.integration import IntegrationReport, halt_detail
from app.gitops.integrate import integrate
from app.gitops.landing_job import DEFAULT_MAX_ATTEMPTS, DEFAULT_ROADMAP, IntegrationInputError
from app.gitops.lock import FileMergeLock

TOKEN_ENV = "ODW_GIT_TOKEN"  # noqa: S105 - a variable name, not a secret
DATA_DIR_ENV = "ODW_DATA_DIR"
RUN_ID_ENV = "ODW_RUN_ID"


def default_data_dir() -> Path:
    if os.environ.get(DATA_DIR_ENV):
        return Path(os.environ[DATA_DIR_ENV])
    xdg = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(xdg) / "odw"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "integrate",
        help=command_help("integrate"),
        description=(
            "Rebase the task branch onto origin/BASE, tick the task in the roadmap, squash it "
            f"into one commit and push it to BASE. Authenticates with ${TOKEN_ENV} through "
            "GIT_ASKPASS; integrations of one base serialise on a lock in the data directory."
        ),
    )
    p.add_argument("--repo", required=True, metavar="URL_OR_PATH", help="the origin repository")
    p.add_argument("--base", required=True, metavar="BRANCH", help="branch to land on")
    p.add_argument("--branch", required=True, metavar="BRANCH", help="task branch to land")
    p.add_argument("--task", required=True, metavar="ID", help="roadmap task id, e.g. 1.2.3")
    p.add_argument("--roadmap", default=DEFAULT_ROADMAP, metavar="PATH")
    p.add_argument(
        "--max-attempts",
        type=int,
        default=DEFAULT_MAX_ATTEMPTS,
        metavar="N",
        help=f"push attempts before giving up (default {DEFAULT_MAX_ATTEMPTS})",
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--keep-branch",
        action="store_true",
        help="keep the task branch on origin after it lands (default: delete it)",
    )
    p.add_argument(
        "--run-id",
        default=None,
        metavar="ID",
        help=f"value of the ODW-Run trailer (default ${RUN_ID_ENV} or 'manual')",
    )
    p.add_argument(
        "--push-option",
        action="append",
        default=[],
        metavar="OPT",
        help="git push option to send (repeatable)",
    )
    p.add_argument(
        "--data-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help=f"mirror cache and locks (default ${DATA_DIR_ENV} or ~/.local/share/odw)",
    )
    # Run as the program, the process ends without finalizing the interpreter
    # (`main.exit_at_once`): nothing here needs it, and it is run once per landing.
    p.set_defaults(func=run_integrate, exit_at_once=True)


def run_integrate(args: argparse.Namespace) -> int:
    data_dir = args.data_dir or default_data_dir()
    run_id = args.run_id or os.environ.get(RUN_ID_ENV) or "manual"
    try:
        report = integrate(
            args.repo,
            args.base,
            args.branch,
            args.task,
            run_id=run_id,
            roadmap_path=args.roadmap,
            max_attempts=args.max_attempts,
            lock=FileMergeLock(data_dir / "locks"),
            data_dir=data_dir,
            token=os.environ.get(TOKEN_ENV) or None,
            push_options=args.push_option,
            delete_branch=not args.keep_branch,
        )
    except IntegrationInputError as exc:
        raise UsageError(str(exc)) from None
    except OSError as exc:
        raise UserError(f"cannot use data directory {data_dir}: {exc}") from None
    if args.json:
        print_json(report.model_dump(by_alias=True))
    else:
        print(readable(report, args.task, args.base))
    return 0 if report.complete else 1


def readable(report: IntegrationReport, task_id: str, base: str) -> str:
    def yes(flag: bool) -> str:
        return "yes" if flag else "no"

    head = f"{task_id} landed on {base}" if report.complete else f"{task_id} NOT landed on {base}"
    lines = [
        head,
        f"  rebased              {yes(report.rebased)}",
        f"  roadmap marked done  {yes(report.roadmap_marked_done)}",
        f"  squash merged        {yes(report.squash_merged)}",
        f"  pushed               {yes(report.pushed)}",
        f"  push attempts        {report.attempts}",
        f"  commit               {report.sha or '-'}",
    ]
    if report.conflicts:
        lines.append(f"  conflicts            {report.conflicts}")
    if report.summary:
        lines.append(f"  summary              {report.summary}")
    detail = halt_detail(report)
    if detail is not None and detail not in (report.conflicts, report.summary):
        lines.append(f"  detail               {detail}")
    return "\n".join(lines)
