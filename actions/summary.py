"""The verdict as a readable job summary (`$GITHUB_STEP_SUMMARY`).

Everything from the agent or the repository passes through the shared
sanitiser, so a summary can neither hide text nor ping anyone.
"""

from __future__ import annotations

from app.core.sanitize import sanitize
from app.core.verdict import Verdict

TAIL_CHARS = 4000


def _cell(text: str) -> str:
    return sanitize(text).replace("|", "\\|").replace("\n", " ").strip() or "-"


def _fence(text: str) -> str:
    body = sanitize(text).replace("```", "'''")
    return f"```text\n{body.rstrip()}\n```"


def render_summary(verdict: Verdict) -> str:
    state = "passed" if verdict.passed else "failed"
    lines = [
        f"## ODW `{verdict.stage}` for task {_cell(verdict.task)}: {state}",
        "",
        f"Token `{verdict.token}`"
        + (f", branch `{_cell(verdict.branch)}`" if verdict.branch else "")
        + (f", fault `{verdict.fault}`" if verdict.fault else ""),
        "",
        "| check | status | reason |",
        "|---|---|---|",
    ]
    for c in verdict.checks:
        said = c.code is not None and f"code {c.code}" in c.reason
        code = f" (code {c.code})" if c.code is not None and not said else ""
        lines.append(f"| {c.name} | {c.status} | {_cell(c.reason)}{code} |")
    if verdict.gates:
        lines += ["", "| gate | status | code | seconds |", "|---|---|---|---|"]
        for g in verdict.gates:
            lines.append(f"| `{_cell(g.command)}` | {g.status} | {g.code} | {g.duration:.1f} |")
    lines += [
        "",
        f"- head before: `{verdict.head_before or '-'}`",
        f"- head after: `{verdict.head_after or '-'}`",
        f"- commits: {len(verdict.commits)}; uncommitted changes left: "
        f"{'yes' if verdict.dirty else 'no'}",
        f"- output: {verdict.output_bytes} bytes; timings: "
        + ", ".join(f"{k} {v:.1f}s" for k, v in verdict.timings.items()),
    ]
    if verdict.salvage.files or verdict.salvage.rejected:
        lines += ["", "### Salvage bundle", ""]
        lines += [f"- kept `{_cell(f)}`" for f in verdict.salvage.files]
        lines += [
            f"- rejected `{_cell(r.path)}`: {_cell(r.reason)}" for r in verdict.salvage.rejected
        ]
    if verdict.report is not None:
        lines += ["", f"### Review decision: {verdict.report.decision}", ""]
        for f in verdict.report.findings:
            where = f" ({_cell(f.path)}:{f.line})" if f.path else ""
            lines.append(f"- {_cell(f.summary)}{where}")
    if verdict.assessment is not None:
        lines += ["", f"### Assessment: {verdict.assessment.classification}", ""]
        lines.append(_cell(verdict.assessment.summary))
    if verdict.output_tail:
        lines += ["", "<details><summary>Output tail</summary>", ""]
        lines += [_fence(verdict.output_tail[-TAIL_CHARS:]), "", "</details>"]
    return "\n".join(lines) + "\n"
