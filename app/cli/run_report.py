"""What `odw run --local` prints without `--json`: what matters, and what to do next.

Tasks kept out by `--task` are counted, not listed; every kept branch of a
failed task or an unresolved survivor comes with the exact commands to resume
it, have it reviewed, or discard it. The full result is in `--json`.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import Any

from app.cli.output import table

FAILED = ("failed", "infra-fault", "deferred")
BLOCKED_SHOWN = 10


def rerun(base_command: Sequence[str], *extra: str) -> str:
    return shlex.join([*base_command, *extra])


def render(result: dict[str, Any], *, dry: bool, command: Sequence[str], path: str) -> list[str]:
    lines = _dry(result) if dry else _run(result)
    lines += _held(result)
    lines += _guidance(result, command, path)
    lines.append(_summary(result))
    return lines


def _not_selected(result: dict[str, Any]) -> set[str]:
    return {h["id"] for h in result.get("held", []) if h["reason"].startswith("not selected")}


def _dry(result: dict[str, Any]) -> list[str]:
    f = result["frontier"]
    lines = [f"dry run on {result['base']}: nothing was written"]
    lines += [f"roadmap {p['kind']}: {p['message']}" for p in result.get("roadmapErrors", [])]
    if result.get("live"):
        lines.append(f"live: {result['live']['summary']}")
    dispatch = ", ".join(f"{d['task']} ({d['stage']})" for d in f["dispatch"])
    lines.append(f"would dispatch: {dispatch or 'nothing'}")
    lines.append(f"ready: {', '.join(f['ready']) or 'none'}")
    hidden = _not_selected(result)
    blocked = [b for b in f["blocked"] if b["id"] not in hidden]
    shown = [
        f"{b['id']} (waiting for "
        + ", ".join([*b["missing"], *(f"{e} (external)" for e in b.get("external", []))])
        + ")"
        for b in blocked[:BLOCKED_SHOWN]
    ]
    more = len(blocked) - len(shown)
    lines.append(
        f"blocked: {', '.join(shown) or 'none'}"
        + (f", and {more} more (see --json)" if more else "")
    )
    return lines


def _run(result: dict[str, Any]) -> list[str]:
    hidden = _not_selected(result)
    rows = [
        [r["id"], r["status"], r["stage"] or "-", r["detail"] or "-"]
        for r in result["results"]
        if r["id"] not in hidden
    ]
    return [
        table(["TASK", "STATUS", "STAGE", "DETAIL"], rows, width=80),
        f"landed: {', '.join(result['processed']) or 'none'}",
    ]


def _held(result: dict[str, Any]) -> list[str]:
    held = result.get("held", [])
    lines = [
        f"held: {h['id']} ({h['reason']})"
        for h in held
        if not h["reason"].startswith("not selected")
    ]
    others = [h for h in held if h["reason"].startswith("not selected")]
    if others:
        lines.append(f"{others[0]['reason']}: {len(others)} other open task(s) (see --json)")
    return lines


def _kept(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Branches an operator must decide about: failed tasks' and unresolved survivors'."""
    out: dict[str, dict[str, Any]] = {}
    for r in result["results"]:
        if r["status"] in FAILED and r.get("branch"):
            assessment = r.get("assessment") or {}
            out[r["id"]] = {
                "id": r["id"],
                "branch": r["branch"],
                "why": f"{r['status']} at {r['stage'] or 'start'}: {r['detail'] or 'no detail'}",
                "assessment": assessment.get("classification"),
                "rationale": assessment.get("rationale"),
            }
    for u in (result.get("recovery") or {}).get("unresolved", []):
        out.setdefault(
            u["id"],
            {
                "id": u["id"],
                "branch": u["branch"],
                "why": f"surviving branch, {u['action']}: {u['reason']}",
                "assessment": u.get("classification"),
                "rationale": None,
            },
        )
    return list(out.values())


def _guidance(result: dict[str, Any], command: Sequence[str], path: str) -> list[str]:
    if result.get("dryRun") and not result.get("recovery"):
        return []
    lines = []
    for k in _kept(result):
        lines.append(f"task {k['id']} {k['why']}")
        assessed = k["assessment"] or "not assessed"
        lines.append(
            f"  kept: branch {k['branch']} on origin; assessment: {assessed}"
            + (f" ({k['rationale']})" if k["rationale"] else "")
        )
        task = ["--task", k["id"]]
        lines.append(f"  resume where it stopped:  {rerun(command, *task, '--resume', 'continue')}")
        lines.append(f"  review and land its work: {rerun(command, *task, '--resume', 'review')}")
        lines.append(
            "  discard it and retry:     "
            f"{shlex.join(['git', '-C', path, 'push', 'origin', '--delete', k['branch']])}"
            f" && {rerun(command)}"
        )
    return lines


def _summary(result: dict[str, Any]) -> str:
    total = len(result["results"])
    landed = len(result["processed"])
    if result["halted"]:
        return f"halted: {result['halted']} ({landed} of {total} task(s) landed)"
    if result.get("dryRun"):
        return f"dry run: {len(result['frontier']['ready'])} task(s) ready, nothing started"
    return f"finished: {landed} of {total} task(s) landed"
