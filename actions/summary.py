"""The verdict as a readable job summary (`$GITHUB_STEP_SUMMARY`).

Everything from the agent or the repository passes through the shared
Markdown sanitiser (`app.core.sanitize`, the one the App's comments and check
runs use), so a summary renders it as text: it can neither hide anything,
load an image, make a link, nor ping anyone. It fits GitHub's step summary
limit (`app.core.github_limits`).
"""

from __future__ import annotations

from app.core.github_limits import STEP_SUMMARY_LIMIT, fit
from app.core.sanitize import inline_code, markdown_code_block, sanitize_markdown
from app.core.verdict import Verdict

TAIL_CHARS = 4000


def _cell(text: str) -> str:
    return sanitize_markdown(text).replace("|", "\\|").replace("\n", " ").strip() or "-"


def _code(text: str) -> str:
    return inline_code(text, 300).replace("|", "\\|")


def _fence(text: str) -> str:
    return markdown_code_block(text).rstrip("\n")


def render_summary(verdict: Verdict) -> str:
    state = "passed" if verdict.passed else "failed"
    lines = [
        f"## ODW {_code(verdict.stage)} for task {_cell(verdict.task)}: {state}",
        "",
        f"Token `{verdict.token}`"
        + (f", branch {_code(verdict.branch)}" if verdict.branch else "")
        + (f", fault {_code(verdict.fault)}" if verdict.fault else ""),
        "",
        "| check | status | reason |",
        "|---|---|---|",
    ]
    for c in verdict.checks:
        said = c.code is not None and f"code {c.code}" in c.reason
        code = f" (code {c.code})" if c.code is not None and not said else ""
        lines.append(f"| {_cell(c.name)} | {_cell(c.status)} | {_cell(c.reason)}{code} |")
    if verdict.gates:
        lines += ["", "| gate | status | code | seconds |", "|---|---|---|---|"]
        for g in verdict.gates:
            lines.append(f"| {_code(g.command)} | {g.status} | {g.code} | {g.duration:.1f} |")
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
        lines += [f"- kept {_code(f)}" for f in verdict.salvage.files]
        lines += [
            f"- rejected {_code(r.path)}: {_cell(r.reason)}" for r in verdict.salvage.rejected
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
    return fit("\n".join(lines), STEP_SUMMARY_LIMIT - 1) + "\n"
