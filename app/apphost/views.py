"""Every text ODW puts on GitHub, rendered in one place from the run's views.

What a run and its tasks say comes from the core's views (`app.core.run_view`),
which local mode prints too; this module renders them as check runs (`ODW ·
run`, `ODW · <id>`, `ODW · <id> · assessment`, `ODW · config`), the one status
comment per pull request (found again by its hidden marker) and the pull
request's title and body. Pure: state in, text out.

Everything that came from outside ODW (roadmap titles, success criteria, gate
output, verdict reasons, assessment rationale, branch names) goes through
`untrusted`, the one door to `app.core.sanitize.sanitize_markdown` (it renders
as text: no hidden marker, image, link, mention or issue reference), `code`
(an inline code span the text cannot close), `sanitize_line` for the pull
request's title, or, for verbatim text, `markdown_code_block` (a fence the
text cannot close). GitHub's size limits are applied where the text is sent
(`app.core.github_limits.fit`, called by the adapters in `app/github`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from urllib.parse import quote

from app.commands.buttons import actions_for
from app.core.naming import execplan_path
from app.core.ownership import task_check_id
from app.core.pipeline import STAGES, spec
from app.core.run_view import STOPPED, RunView, TaskRow, TaskView, run_view, task_view
from app.core.sanitize import (
    html_text,
    inline_code,
    markdown_code_block,
    sanitize_line,
    sanitize_markdown,
    truncate,
)
from app.core.state import RunState, TaskState
from app.core.telling import telling_line
from app.core.titles import failed_gate, stopped_title, where
from app.core.verdict import Verdict
from app.github.protocols import CheckAction

TITLE_LIMIT = 120
TAIL_LIMIT = 4_000
RUN_CHECK = "ODW · run"
CONFIG_CHECK = "ODW · config"
MARKER = "<!-- odw:status v1 task={task} -->"
NOTICE_MARKER = "<!-- odw:notice v1 task={task} key={key} -->"


def untrusted(text: str | None, limit: int | None = None) -> str:
    """Text from outside ODW, made safe to show (the one place it is done)."""
    clean = sanitize_markdown(text or "")
    return truncate(clean, limit) if limit is not None else clean


def code(text: str | None, limit: int = 200) -> str:
    """Inline code that cannot be closed from inside."""
    return inline_code(text or "", limit)


def cell(text: str | None, limit: int = 300) -> str:
    """A Markdown table cell: no pipes or line breaks from the text."""
    return untrusted(text, limit).replace("|", "\\|").replace("\n", " ")


def task_check_name(task_id: str) -> str:
    return f"ODW · {task_id}"


def assessment_check_name(task_id: str) -> str:
    return f"ODW · {task_id} · assessment"


def marker(task_id: str) -> str:
    return MARKER.format(task=untrusted(task_id, 100).replace("-->", ""))


@dataclass(frozen=True)
class CheckView:
    name: str
    title: str
    summary: str
    conclusion: str | None  # None while in progress
    text: str | None = None
    external_id: str | None = None
    actions: tuple[CheckAction, ...] | None = None  # None: leave the buttons alone
    details_url: str | None = None  # the current stage's Actions run, when known

    @property
    def status(self) -> str:
        return "in_progress" if self.conclusion is None else "completed"

    def digest(self) -> str:
        return digest(asdict(self))


@dataclass(frozen=True)
class Links:
    """Where things are on GitHub, for one run (filled by the sync as it learns them)."""

    pulls: Mapping[str, str] = field(default_factory=dict)  # task id -> PR URL
    checks: Mapping[str, str] = field(default_factory=dict)  # task id -> check URL
    jobs: Mapping[str, str] = field(default_factory=dict)  # task id -> last Actions job URL
    # task id -> {stage or stage/lane -> that stage's last Actions job URL}
    stage_jobs: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # task id -> {stage or stage/lane -> seconds its attempts took, from their verdicts}
    times: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    repository_url: str = ""
    notice: str = ""  # said once on the run check (branch protection: landing through PRs)


def digest(data: object) -> str:
    raw = json.dumps(data, sort_keys=True, default=str).encode()
    return hashlib.sha256(raw).hexdigest()[:16]


def one_line(text: str, limit: int = TITLE_LIMIT) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# -- the run ------------------------------------------------------------------


def run_check(s: RunState, links: Links) -> CheckView:
    v = run_view(s)
    # No stage: the run check changes when a task's status does, not at every
    # stage or branch head (each task's own check run shows those), which keeps
    # writes few. `/odw status` says the stage.
    lines = [
        f"**Run** {code(v.run_id, 200)} on {code(v.base, 100)}",
        "",
        "| task | status | why | links |",
        "|---|---|---|---|",
    ]
    for r in v.rows:
        why = "" if r.status == "running" else r.why
        task = s.tasks.get(r.id)
        found = _row_links(r, task.branch if task is not None else "", links)
        lines.append(f"| {cell(r.id)} | {cell(r.status)} | {cell(why)} | {found} |")
    nexts = _run_next(v)
    if nexts:
        lines += ["", "**Next:**", *(f"- {n}" for n in nexts)]
    if v.would_start is not None:
        would = ", ".join(untrusted(t, 40) for t in v.would_start[:10]) or "nothing"
        lines += [
            "",
            f"**Dry run:** nothing was dispatched or written; a run now would start {would} "
            f"(at most {v.max_parallel} at a time).",
        ]
    if links.notice:
        lines += ["", f"**Note:** {links.notice}"]
    lines += ["", f"**halted:** {cell(v.halted or 'no')}"]
    lines.append("**faultMetrics:** " + ", ".join(f"{k} {n}" for k, n in v.fault_metrics))
    if v.remediation:
        lines.append(f"**Remediation:** {cell(v.remediation, 1000)}")
    if v.moves:
        lines += ["", "**Operator moves:**"]
        for m in v.moves:
            note = f" — {m.refused}" if m.refused else ""
            lines.append(f"- {cell(m.what)} by {cell(m.by)}{cell(note)}")
    return CheckView(
        RUN_CHECK,
        one_line(untrusted(v.title)),
        "\n".join(lines),
        v.conclusion,
        external_id=f"run:{v.run_id}"[:255],
    )


def _row_links(row: TaskRow, branch: str, links: Links) -> str:
    """The task's pull request and check run and, once it stopped, its failing job.

    Links that move while a task runs (its PR opening, the newest branch head's
    check run, the latest job) would cost the run check an edit each, so a
    running task links its pull request by a search for its branch (GitHub
    docs, "Filtering and searching issues and pull requests": `head:`), where
    its checks are one click on; the front page changes when a task's status does.
    """
    if row.status == "running":
        search = quote(f"is:pr head:{branch}")
        pull = f"{links.repository_url}/pulls?q={search}" if links.repository_url else None
        check = job = None
    else:
        pull, check = links.pulls.get(row.id), links.checks.get(row.id)
        job = links.jobs.get(row.id) if row.status in STOPPED else None
    found = [
        f"[{label}]({url})" for label, url in (("PR", pull), ("check", check), ("job", job)) if url
    ]
    return " · ".join(found)


def _run_next(v: RunView) -> list[str]:
    """What to type now: undo an operator's halt, then each stopped task's moves."""
    out = ["`/odw resume` — undo the halt and go on"] if v.resume else []
    for r in v.rows:
        i = untrusted(r.id, 60)
        out += [f"`/odw {m.move} {i}{m.usage}` — {cell(m.says)}" for m in r.moves]
    return out


def superseded_check(name: str, head_sha: str) -> CheckView:
    """What the run check on the base's older head says once the base moved to `head_sha`.

    Concluded `neutral` (the run did not fail there): GitHub never reopens a
    completed check run, so the run's front page is a new one on the new head.
    """
    return CheckView(
        name,
        one_line(f"moved to the base's new head {head_sha[:12]}"),
        f"The base moved to `{head_sha}` (a task landed): the run's check is there now.",
        "neutral",
    )


def config_check(path: str, field_name: str, line: int | None, message: str) -> CheckView:
    where = (
        f"{path}" + (f" line {line}" if line else "") + (f", {field_name}" if field_name else "")
    )
    return CheckView(
        CONFIG_CHECK,
        one_line(f"invalid {where}: {untrusted(message, 200)}"),
        (
            f"ODW read {code(path, 200)} on this commit and could not use it.\n\n"
            f"- **file:** {code(path, 200)}\n"
            f"- **field:** {code(field_name or '(top level)')}\n"
            f"- **line:** {line if line else 'unknown'}\n"
            f"- **problem:** {cell(message, 2000)}\n\n"
            "Nothing was dispatched. Fix the file on the base branch; the next push "
            "(or `odw app run`) reads it again."
        ),
        "failure",
    )


# -- one task -------------------------------------------------------------------


def _stage_rows(v: TaskView, links: Links, latest: Verdict | None) -> list[str]:
    """One row per stage tried (per lane for the dual review): result, attempts,
    time spent and the stage's last Actions job."""
    jobs = links.stage_jobs.get(v.id, {})
    times = links.times.get(v.id, {})
    rows = ["| stage | result | attempts | time | job |", "|---|---|---|---|---|"]
    for r in v.stages:
        lanes = spec(r.stage).lanes if r.stage in STAGES else ("",)
        for lane in lanes:
            name = f"{r.stage}/{lane}" if lane else r.stage
            shown = f"{r.stage} (lane {lane})" if lane else r.stage
            # Each lane's dispatch counts an attempt of the stage: a round is one per lane.
            tries = -(-r.attempts // len(lanes)) if lane else r.attempts
            job = jobs.get(name)
            rows.append(
                f"| {cell(shown)}{' ← current' if r.current else ''} "
                f"| {cell(_stage_result(v, r.stage, lane, r.current, latest), 200)} | {tries} "
                f"| {_duration(times.get(name))} | {f'[job]({job})' if job else ''} |"
            )
    return rows


def _stage_result(v: TaskView, stage: str, lane: str, current: bool, latest: Verdict | None) -> str:
    """What a stage came to, as far as the run's state says."""
    if current:
        return "running"
    if stage == v.stage and v.status == "landed":
        return f"landed as {(v.landed_sha or '')[:12]}" if v.landed_sha else "landed"
    if stage != v.stage or v.status == "landed":
        return "passed"
    if v.status not in ("failed", "infra-fault", "deferred"):
        return "waiting" if v.status == "running" else v.status
    last = v.last
    if lane and last is not None and last.lane != lane:
        return "finished"
    gate = failed_gate(latest) if latest is not None and latest.stage == stage else None
    if gate is not None:
        code = "no exit code" if gate.code is None else f"exit {gate.code}"
        return f"failed: {inline_code(gate.command, 60)} {code}"
    return v.status if last is None else f"{v.status} ({last.outcome})"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 90:
        return f"{round(seconds)}s"
    return f"{round(seconds / 60)}m"


def _verdict_block(latest: Verdict | None) -> list[str]:
    """The last verdict's checks and gates, each with its exit code where one was recorded."""
    if latest is None:
        return []
    lines = [
        "",
        f"**Last verdict:** {cell(latest.stage)} — {'passed' if latest.passed else 'failed'}",
        "",
        "| check | status | exit | reason |",
        "|---|---|---|---|",
    ]
    for c in latest.checks:
        said = (
            c.code if c.code is not None else (latest.exit_code if c.name == "exit_code" else None)
        )
        lines.append(
            f"| {cell(c.name)} | {cell(c.status)} | {'' if said is None else said} "
            f"| {cell(c.reason, 400)} |"
        )
    for g in latest.gates:
        told = telling_line(g.tail) if g.status == "failed" else ""
        exit_code = "" if g.code is None else str(g.code)
        lines.append(
            f"| gate {code(g.command, 100)} | {cell(g.status)} | {exit_code} | {cell(told, 300)} |"
        )
    return lines


def _tails(latest: Verdict | None) -> str | None:
    """Each gate's output tail in `<details>`, its telling line in the summary line."""
    if latest is None:
        return None
    parts = []
    for g in latest.gates:
        tail = g.tail or ""
        cut = len(tail) - TAIL_LIMIT
        note = f" (last {TAIL_LIMIT} characters; {cut} cut)" if cut > 0 else ""
        told = telling_line(tail) if g.status == "failed" else ""
        said = f" — {html_text(told, 200)}" if told else ""
        # Raw HTML: the summary line takes HTML escapes, not Markdown's.
        summary = f"{html_text(g.command, 200)}: exit {g.code}{note}{said}"
        parts.append(
            f"<details><summary>{summary}</summary>\n\n"
            f"{markdown_code_block(tail[-TAIL_LIMIT:])}</details>"
        )
    return "\n\n".join(parts) if parts else None


def failing_gate_line(latest: Verdict | None) -> str | None:
    """The failing gate in one line for the status comment: command, exit, telling line."""
    gate = failed_gate(latest)
    if gate is None:
        return None
    told = telling_line(gate.tail)
    exit_code = "no exit code" if gate.code is None else f"exit {gate.code}"
    line = f"**Failing gate:** {code(gate.command, 100)} {exit_code}"
    return line + (f": {code(told, 200)}" if told else "") + " (the check run has the output)"


def task_title(v: TaskView, latest: Verdict | None) -> str:
    """A stopped task's verdict, cause and command; else what it does now, or its landing."""
    return stopped_title(v, latest) if v.moves else v.head


def next_moves(v: TaskView) -> list[str]:
    """The operator's next moves for a task that stopped, as `/odw` commands."""
    i = untrusted(v.id, 60)
    return [f"`/odw {m.move} {i}{m.usage}` — {cell(m.says)}" for m in v.moves]


def task_check(s: RunState, t: TaskState, links: Links, latest: Verdict | None) -> CheckView:
    v = task_view(s, t)
    head = untrusted(task_title(v, latest))
    moves = next_moves(v)
    job = links.jobs.get(v.id)
    lines = [
        f"**{cell(v.id)}** {untrusted(v.title, 200)} · branch {code(v.branch, 100)}"
        + (f" · [last Actions run]({job})" if job else ""),
        "",
        *_stage_rows(v, links, latest),
        *_verdict_block(latest),
    ]
    if v.detail:
        lines += ["", f"**Detail:** {cell(v.detail, 2000)}"]
    if v.last is not None:
        last = v.last
        said = "passed" if last.ok else "failed"
        # "attempt N", never "#N": GitHub links "#N" to issue N.
        line = f"**Last attempt:** {cell(last.name)}, attempt {last.attempt}, {said}"
        line += f" ({cell(last.outcome)})" if last.outcome != said else ""
        line += f" — {cell(last.detail, 1000)}" if last.detail and last.detail != v.detail else ""
        lines += ["", line]
    if v.failure:
        lines += ["", cell(v.failure, 2000)]
    if moves:
        lines += ["", "**Next:** " + " · ".join(moves)]
    return CheckView(
        task_check_name(v.id),
        one_line(head),
        "\n".join(lines),
        v.conclusion,
        text=_tails(latest),
        external_id=task_check_id(s.run_id, v.id)[:255],
        actions=tuple(actions_for(v.status, v.moves)),
        details_url=job,
    )


def _assessment_lines(t: TaskState) -> list[str]:
    a, sv = t.assessment, t.salvage
    lines: list[str] = []
    if a is not None:
        lines += [
            f"**Assessment:** {cell(a.classification)} — {cell(a.rationale, 1000)}",
            "",
            "| evidence | value |",
            "|---|---|",
            f"| changes within the task's scope | {'yes' if a.task_scoped else 'no'} |",
            f"| validation | {cell(', '.join(a.validation) or 'none')} |",
            f"| missing | {cell('; '.join(a.missing_evidence) or 'nothing', 1000)} |",
            f"| residual risk | {cell('; '.join(a.residual_risk) or 'none', 1000)} |",
        ]
        if a.evidence_error:
            lines.append(f"| evidence error | {cell(a.evidence_error, 500)} |")
    if sv is not None:
        if sv.committed:
            files = ", ".join(code(f) for f in sv.committed)
            lines += [
                "",
                f"**Salvage:** committed {files} on {code(t.branch, 100)} ({(sv.sha or '')[:12]}).",
            ]
        else:
            why = cell(sv.detail, 1000) or "no reason recorded"
            held = " What the branch already holds is what the assessment describes." if a else ""
            lines += ["", f"**Salvage:** nothing committed — {why}.{held}"]
        if sv.detail and sv.committed:
            lines.append(f"{cell(sv.detail, 1000)}")
    return lines


def assessment_check(s: RunState, t: TaskState) -> CheckView | None:
    if t.assessment is None and t.salvage is None:
        return None
    a = t.assessment
    title = f"{a.classification}" if a is not None else "not assessed"
    if t.salvage is not None:
        title += f"; salvage: {len(t.salvage.committed)} file(s) committed"
    lines = _assessment_lines(t)
    moves = next_moves(task_view(s, t))
    if moves:
        lines += ["", "**Next:**", *(f"- {m}" for m in moves)]
    return CheckView(
        assessment_check_name(t.id),
        one_line(title),
        "\n".join(lines),
        "action_required" if t.status in ("failed", "infra-fault") else "neutral",
        external_id=f"{s.run_id}/{t.id}/assessment"[:255],
    )


def _status_said(v: TaskView, latest: Verdict | None) -> str:
    """`landed as <sha>`, `failed at gates`, `running`: the status with where it ended."""
    if v.status == "landed":
        return f"landed as {(v.landed_sha or '')[:12]}" if v.landed_sha else "landed"
    if v.status == "running" or not v.stage:
        return v.status
    return f"{v.status} at {where(v, latest)}"


def status_comment(
    s: RunState, t: TaskState, links: Links, latest: Verdict | None, landed_note: bool
) -> str:
    """The one status comment of the task's pull request (edited in place).

    It changes at milestones only (running, failed, assessed, salvaged, landed):
    the live stage and attempts are on the task's check run, updated per stage,
    so the comment costs one edit per milestone, not one per stage.
    """
    v = task_view(s, t)
    final = t.status != "running"
    lines = [
        marker(t.id),
        f"### ODW · {cell(t.id)} {untrusted(v.title, 200)}",
        "",
        f"**Status:** {cell(_status_said(v, latest))}"
        + ("" if final else " — the check run shows the current stage and attempts"),
    ]
    check = links.checks.get(t.id)
    pull = links.pulls.get(t.id)
    if not final and pull:
        # While running, the pull request's Checks tab (GitHub docs, "About status
        # checks"): each new branch head gets a new check run, and a link to
        # that one alone would cost a comment edit per head.
        check = f"{pull}/checks"
    refs = [f"branch {code(t.branch, 100)}"]
    if check:
        refs.append(f"[check run]({check})")
    job = links.jobs.get(t.id)
    if final and job:  # while running, the check run links the current stage's run
        refs.append(f"[last Actions run]({job})")
    lines.append(" · ".join(refs))
    if final:
        lines += ["", *_stage_rows(v, links, latest)]
    gate_line = failing_gate_line(latest) if t.status != "landed" else None
    if gate_line:
        lines += ["", gate_line]
    if latest is not None and not latest.passed and t.status != "landed":
        failed = [c for c in latest.checks if c.status == "failed"]
        if failed:
            lines += ["", "**Failed checks:** " + "; ".join(
                f"{cell(c.name)}: {cell(c.reason, 300)}" for c in failed
            )]  # fmt: skip
    if t.status == "landed" and t.landed_sha:
        url = links.repository_url
        sha = t.landed_sha
        link = f"[{sha[:12]}]({url}/commit/{sha})" if url else f"`{sha[:12]}`"
        lines += ["", f"**Landed** on {code(s.base, 100)} as squash commit {link}."]
        if landed_note:
            lines.append(
                "GitHub shows this pull request as closed, not merged: ODW landed it by "
                "pushing the squash commit to the base, so the merge button was never used."
            )
    assessed = _assessment_lines(t)
    if assessed:
        lines += ["", "---", *assessed]
    if v.failure:
        lines += ["", cell(v.failure, 2000)]
    moves = next_moves(v)
    if moves:
        lines += ["", "**Next moves:**", *(f"- {m}" for m in moves)]
    return "\n".join(lines)


def notice_marker(task_id: str, key: str) -> str:
    safe = untrusted(task_id, 100).replace("-->", "")
    return NOTICE_MARKER.format(task=safe, key=untrusted(key, 100).replace("-->", ""))


def notice_key(t: TaskState) -> str | None:
    """Which stop of the task a notice is about (None: nobody needs to act).

    Due once the task stopped and nothing more runs for it on its own (its
    assessment and salvage are recorded); every new stop has run at least one
    more attempt, so the key moves with each and stays put across syncs.
    """
    if t.status not in ("failed", "infra-fault", "deferred") or t.awaiting is not None:
        return None
    return f"{t.status}/{t.stage or '-'}/{sum(t.attempts.values())}"


def halt_notice_key(s: RunState) -> str | None:
    """Which halt of the run a notice is about (None: no halt a task's notice
    does not already tell, or an operator's own)."""
    told = s.stop is None or s.stop.kind in ("failure", "operator")
    if s.recovery.halt is None and told:
        return None
    return "halt/" + digest(run_view(s).halted or "")[:12]


def halt_notice(s: RunState, key: str, mention: tuple[str, ...]) -> str:
    """The short new comment that tells `mention` the run halted, why, and what to type."""
    v = run_view(s)
    who = " ".join(f"@{login}" for login in mention)
    lines = [
        notice_marker("run", key),
        (f"{who} " if who else "") + f"**ODW · run** halted: {cell(v.halted, 300)}",
    ]
    nexts = _run_next(v)
    first = nexts[0] if nexts else "once the cause is fixed, `/odw run` starts a new run"
    lines += [
        "",
        f"To go on: {first}.",
        "",
        "The `ODW · run` check on the base has every task's state and the other moves.",
    ]
    return "\n".join(lines)


def notice_comment(
    s: RunState, t: TaskState, links: Links, latest: Verdict | None, mention: tuple[str, ...]
) -> str:
    """The short new comment that notifies `mention` when a person must act on a task:
    what failed in one line, and the exact command (edits notify nobody)."""
    v = task_view(s, t)
    key = notice_key(t) or ""
    who = " ".join(f"@{login}" for login in mention)
    lines = [
        notice_marker(t.id, key),
        (f"{who} " if who else "") + f"**ODW · {cell(t.id)}** {cell(task_title(v, latest), 300)}",
    ]
    if v.moves:
        first = v.moves[0]
        lines += ["", f"To go on: `/odw {first.move} {untrusted(v.id, 60)}{first.usage}` — "
                  f"{cell(first.says)}."]  # fmt: skip
    check = links.checks.get(t.id)
    refs = [f"[check run]({check})"] if check else []
    job = links.jobs.get(t.id)
    if job:
        refs.append(f"[Actions log]({job})")
    refs.append("the status comment above has the details and the other moves")
    lines += ["", " · ".join(refs)]
    return "\n".join(lines)


def pull_title(s: RunState, t: TaskState) -> str:
    """Plain text (GitHub renders no Markdown in a title, but links references)."""
    return one_line(f"ODW {sanitize_line(t.id)}: {sanitize_line(task_view(s, t).title)}", 250)


def pull_body(s: RunState, t: TaskState, plan_committed: bool) -> str:
    roadmap = s.roadmap
    task = roadmap.get(t.id) if roadmap is not None else None
    lines = [f"**Task {cell(t.id)}:** {untrusted(task_view(s, t).title, 200)}", ""]
    if task is not None and task.success:
        lines += ["**Success criteria:**", "", untrusted(task.success, 4000), ""]
    plan = execplan_path(t.id)
    if plan_committed:
        lines.append(f"**ExecPlan:** [`{plan}`](../blob/{untrusted(t.branch, 100)}/{plan})")
    else:
        lines.append(f"**ExecPlan:** not committed yet (`{plan}`)")
    lines += ["", "Opened by ODW as a draft; progress is in the status comment below."]
    return "\n".join(lines)


def landed_body(s: RunState, t: TaskState, repository_url: str) -> str:
    """The pull request's body once its squash landed by push: it names the commit,
    and says why GitHub shows the pull request as closed, not merged."""
    sha = t.landed_sha or ""
    link = f"[{sha[:12]}]({repository_url}/commit/{sha})" if repository_url else f"`{sha[:12]}`"
    return (
        f"{pull_body(s, t, plan_committed=True)}\n\n"
        f"**Landed** on {code(s.base, 100)} as squash commit {link}. GitHub shows this pull "
        "request as closed, not merged: ODW pushed the squash commit to the base itself, "
        "so the merge button was never used."
    )
