"""`odw simulate SCENARIO.json`: rehearse a policy on the real core, scripted outcomes."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from app.cli.commands import command_help
from app.cli.errors import UsageError, UserError
from app.cli.output import print_json, table
from app.engine.scenario import ScenarioError, load_scenario, simulate


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "simulate",
        help=command_help("simulate"),
        description="Run the real core against a scenario's scripted outcomes and print "
        "the run result. A failed run is still a successful simulation (exit 0).",
    )
    p.add_argument("scenario", metavar="SCENARIO.json")
    p.add_argument("--json", action="store_true", help="print the run result as JSON")
    p.add_argument("--trace", action="store_true", help="include the event list")
    p.set_defaults(func=run_simulate)


def run_simulate(args: argparse.Namespace) -> int:
    try:
        text = Path(args.scenario).read_text(encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot read scenario {args.scenario}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"scenario {args.scenario}: not UTF-8 text") from None
    try:
        scenario, _ = load_scenario(text)
    except ScenarioError as exc:
        raise UsageError(str(exc)) from None
    result, events, _ = simulate(scenario)
    if args.trace:
        result["events"] = events
    if args.json:
        print_json(result)
    else:
        _print_human(result, trace=args.trace)
    return 0


def _print_human(result: dict[str, Any], *, trace: bool) -> None:
    rows = [
        [
            r["id"],
            r["status"],
            r["stage"] or "-",
            ", ".join(f"{k}={v}" for k, v in r["attempts"].items()) or "-",
            r["detail"] or "-",
        ]
        for r in result["results"]
    ]
    print(table(["TASK", "STATUS", "STAGE", "ATTEMPTS", "DETAIL"], rows, width=80))
    print()
    print("processed:", ", ".join(result["processed"]) or "none")
    print("halted:", result["halted"] or "no")
    print("faultMetrics:", json.dumps(result["faultMetrics"]))
    print("summary:", result["summary"])
    if trace:
        print()
        for e in result["events"]:
            rest = {k: v for k, v in e.items() if k not in ("type", "version", "at")}
            print(e["type"], json.dumps(rest, sort_keys=True)[:200])
