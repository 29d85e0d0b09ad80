"""`odw run --local PATH`: run the roadmap of a clone whose origin is the forge.

Exit codes: 0 the run ended without halting (every selectable task landed, or
nothing was selectable); 1 the run halted or a task failed, or PATH cannot be
used (not a repository, no origin, no roadmap on the base, a run owned by a
live process); 2 bad usage or configuration, or a roadmap with errors.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from app.cli.commands import command_help
from app.cli.errors import UsageError, UserError
from app.cli.output import print_json


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "run",
        help=command_help("run"),
        description="Select ready roadmap tasks and carry each through plan, design review, "
        "implement, gates, dual review and squash integration, with the agent as a local "
        "subprocess. PATH's origin is the source of truth; PATH's working tree is never "
        "touched. Rerun the same command after a crash to resume. Exit 0: ended without "
        "halting; 1: halted, a task failed, or PATH unusable; 2: bad usage or configuration.",
    )
    p.add_argument("--local", metavar="PATH", required=True, type=Path,
                   help="a clone whose `origin` is the forge")  # fmt: skip
    p.add_argument("--agent", metavar="CMD", help="the agent command (default: odw.yml agent)")
    p.add_argument("--base", metavar="BRANCH", help="the branch tasks land on")
    p.add_argument("--max-parallel", metavar="N", type=int, help="tasks in flight at once")
    p.add_argument("--task", metavar="ID", help="only this task is selectable")
    p.add_argument("--dry-run", action="store_true", help="report what would run; write nothing")
    p.add_argument("--resume", metavar="MODE", choices=("assess", "review", "continue"),
                   help="resume surviving branches: assess | review | continue "
                   "(sets resumePartialBranches and resumeMode)")  # fmt: skip
    p.add_argument("--config", metavar="FILE", type=Path,
                   help="YAML/JSON shaped like .github/odw.yml, overriding it")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the run result as JSON")
    p.set_defaults(func=run_local)


def run_local(args: argparse.Namespace) -> int:
    # Imported here: the store and rich are heavy, and every `odw stage` a run
    # spawns loads this module too.
    from app.gitops.evidence.repo import RepoError
    from app.local.dryrun import dry_run
    from app.local.launch import Request, RoadmapInvalid
    from app.local.progress import ProgressView
    from app.local.run import RunRefused, execute, exit_code_of, prepare
    from app.local.run_options import SettingsError

    request = Request(
        path=args.local,
        agent=args.agent,
        base=args.base,
        max_parallel=args.max_parallel,
        task=args.task,
        dry_run=args.dry_run,
        config_file=args.config,
        resume=args.resume,
    )
    try:
        if request.dry_run:
            result = dry_run(request)
            _report(result, args, dry=True)
            return exit_code_of(result)
        repo, plan = prepare(request)
        for cycle in plan.roadmap.errors:  # cycles: they block only their own tasks
            print(f"odw run: docs/roadmap.md: {cycle.kind}: {cycle.message}", file=sys.stderr)
        interactive = not args.json and sys.stderr.isatty()
        view = ProgressView(enabled=interactive)

        def announce(run_id: str, resumed: bool) -> None:
            if not args.json:
                what = "resuming" if resumed else "starting"
                print(f"odw run: {what} run {run_id} on {plan.base}", file=sys.stderr)

        with view:
            outcome = execute(repo, plan, feed=view.feed, on_run=announce)
    except RoadmapInvalid as exc:
        for problem in exc.problems:
            print(f"odw run: {problem}", file=sys.stderr)
        raise UsageError("the roadmap has errors; nothing was scheduled") from None
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
    except (RepoError, RunRefused) as exc:
        raise UserError(str(exc)) from None
    except KeyboardInterrupt:
        print("odw run: interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    _report(outcome.result, args, dry=False)
    return outcome.exit_code


def same_command(args: argparse.Namespace) -> list[str]:
    """The command the user ran, for the next steps we print (without --task/--resume)."""
    argv = ["odw", "run", "--local", str(args.local)]
    for flag, value in (("--base", args.base), ("--agent", args.agent), ("--config", args.config),
                        ("--max-parallel", args.max_parallel)):  # fmt: skip
        if value is not None:
            argv += [flag, str(value)]
    return argv


def _report(result: dict[str, Any], args: argparse.Namespace, *, dry: bool) -> None:
    from app.cli.run_report import render

    if args.json:
        print_json(result)
        return
    for line in render(result, dry=dry, command=same_command(args), path=str(args.local)):
        print(line)
