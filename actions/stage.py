"""One stage attempt on a checked-out task branch, start to verdict.

Prompt, agent under a deadline, evidence, then for write stages: commit what
the agent left under the machine identity, run the gates and push the task
branch (and nothing else); or, when the stage failed, bundle the dirty
ExecPlans for salvage. The verdict is written whatever happens.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from actions import checks, gitwork, salvage
from actions.gates import DEFAULT_GATE_TIMEOUT, run_gates
from actions.proctree import ProcessResult, run_process
from actions.prompt import ROADMAP_PATH, PromptError, build_prompt
from actions.stream import EchoBudget, HeadTailCapture, MarkerScanner, tee
from actions.summary import render_summary
from app.core.config import DEFAULT_STAGE_DEADLINE
from app.core.credentials import without_credentials
from app.core.execplan import plan_stage_problems
from app.core.identity import RUNNER_IDENTITY, Identity
from app.core.naming import execplan_path, task_branch
from app.core.verdict import (
    AGENT_STAGES,
    MARKER_WORD,
    WRITE_STAGES,
    Check,
    GateResult,
    InfraFault,
    SalvageBundle,
    Verdict,
    valid_token,
)
from app.gitops.runner import GitError, config_entries, git, risky_config

# One default deadline wherever a stage runs: the run settings' (`stageDeadlines`).
DEFAULT_DEADLINE = DEFAULT_STAGE_DEADLINE
DEFAULT_GRACE = 10.0
GATE_STAGES = frozenset({"implement", "fix"})
MAX_PLAN_BYTES = 1 << 20
TAIL_CHARS = 8000


class StageSetupError(Exception):
    """The stage cannot start as asked (bad usage): nothing was run."""


@dataclass(frozen=True)
class StageRequest:
    stage: str
    task: str
    token: str
    workdir: Path
    agent: str
    out_dir: Path
    deadline: float = DEFAULT_DEADLINE
    grace: float = DEFAULT_GRACE
    gates: tuple[str, ...] = ()
    gate_timeout: float = DEFAULT_GATE_TIMEOUT
    branch: str | None = None
    remote: str = "origin"
    push: bool = True
    identity: Identity = RUNNER_IDENTITY
    push_token: str | None = None
    context_text: str | None = None
    env: Mapping[str, str] | None = None
    echo: BinaryIO | None = None
    echo_budget: int = 8 << 20
    head_bytes: int = 1 << 20
    tail_bytes: int = 1 << 20
    verdict_name: str = "verdict.json"

    @property
    def expected_branch(self) -> str:
        return self.branch or task_branch(self.task)


@dataclass
class _Setup:
    workdir: Path
    branch: str | None
    push_url: str | None
    prompt: str
    config: dict[str, tuple[str, ...]]


def _read_plan(workdir: Path, rel: str) -> str | None:
    path = workdir / rel
    if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_PLAN_BYTES:
        return None
    return path.read_text("utf-8", errors="replace")


def _switch_to_task_branch(workdir: Path, req: StageRequest, branch: str | None) -> str:
    """Write stages work on the task branch: switch to it (creating it from HEAD).

    Only a clean checkout is switched, so nothing of the caller's is carried
    along or lost; a dirty one is refused with what to do.
    """
    found = f"branch {branch}" if branch else "a detached HEAD"
    if gitwork.status(workdir):
        raise StageSetupError(
            f"the {req.stage} stage needs {req.expected_branch} checked out; found {found} "
            "with uncommitted changes (commit or stash them, or check out the task branch)"
        )
    exists = (
        git(
            workdir,
            "rev-parse",
            "--verify",
            "--quiet",
            f"refs/heads/{req.expected_branch}",
            check=False,
        ).returncode
        == 0
    )
    args = ("switch", req.expected_branch) if exists else ("switch", "-c", req.expected_branch)
    try:
        git(workdir, *args)
    except GitError as exc:
        raise StageSetupError(f"cannot switch to {req.expected_branch}: {exc}") from None
    return req.expected_branch


def prepare(req: StageRequest) -> _Setup:
    """Check the request against the checkout; StageSetupError names what is wrong."""
    if req.stage not in AGENT_STAGES:
        raise StageSetupError(f"unknown stage {req.stage!r} (one of {', '.join(AGENT_STAGES)})")
    if not valid_token(req.token):
        raise StageSetupError("the token must be 8-128 characters of A-Z a-z 0-9 _ -")
    if not req.agent.strip():
        raise StageSetupError("no agent command given")
    if req.deadline <= 0 or req.gate_timeout <= 0 or req.grace < 0:
        raise StageSetupError("deadlines must be positive")
    if not req.workdir.is_dir():
        raise StageSetupError(f"working directory {req.workdir} does not exist")
    workdir = req.workdir.resolve()
    top = gitwork.toplevel(workdir)
    if top is None or top.resolve() != workdir:
        raise StageSetupError(f"{req.workdir} is not the top of a git checkout")
    out = req.out_dir.resolve()
    if out == workdir or out.is_relative_to(workdir):
        raise StageSetupError("the output directory must be outside the checkout")
    branch = gitwork.current_branch(workdir)
    push_url = None
    if req.stage in WRITE_STAGES:
        if branch != req.expected_branch:
            branch = _switch_to_task_branch(workdir, req, branch)
        if req.push:
            # No remote (a purely local checkout) means nothing to push to: the
            # push check records that instead of refusing to run the stage.
            push_url = gitwork.remote_url(workdir, req.remote)
    roadmap = workdir / ROADMAP_PATH
    try:
        roadmap_text = roadmap.read_text("utf-8", errors="replace")
    except OSError as exc:
        raise StageSetupError(f"cannot read {ROADMAP_PATH}: {exc.strerror or exc}") from None
    try:
        prompt = build_prompt(
            stage=req.stage,
            task_id=req.task,
            token=req.token,
            roadmap_text=roadmap_text,
            execplan_text=_read_plan(workdir, execplan_path(req.task)),
            context_text=req.context_text,
        )
    except PromptError as exc:
        raise StageSetupError(str(exc)) from None
    try:
        config = config_entries(workdir)
    except GitError as exc:
        raise StageSetupError(f"cannot read the checkout's git configuration: {exc}") from None
    return _Setup(workdir, branch, push_url, prompt, config)


def agent_env(req: StageRequest, prompt_file: Path, report_file: Path) -> dict[str, str]:
    """The agent contract: the same variables wherever ODW runs an agent."""
    return {
        **without_credentials(os.environ),
        **without_credentials(req.env or {}),
        "ODW_STAGE": req.stage,
        "ODW_TASK_ID": req.task,
        "ODW_PROMPT_FILE": str(prompt_file),
        # The marker is exported in two halves, so no variable holds it whole
        # and a dump of the environment cannot print it (on a line or not).
        "ODW_COMPLETION_WORD": MARKER_WORD,
        "ODW_COMPLETION_TOKEN": req.token,
        "ODW_REPORT_FILE": str(report_file),
        "ODW_EXECPLAN_PATH": execplan_path(req.task),
    }


def _run_agent(
    req: StageRequest, setup: _Setup, prompt_file: Path, report_file: Path
) -> tuple[ProcessResult, MarkerScanner, HeadTailCapture]:
    scanner = MarkerScanner(req.token)
    with (req.out_dir / "agent.log").open("wb") as log:
        capture = HeadTailCapture(req.head_bytes, req.tail_bytes, sink=log)
        sinks = [scanner.feed, capture.feed]
        if req.echo is not None:
            sinks.append(EchoBudget(req.echo, req.echo_budget).feed)
        result = run_process(
            ["/bin/sh", "-c", req.agent],
            cwd=setup.workdir,
            env=agent_env(req, prompt_file, report_file),
            stdin_path=prompt_file,
            deadline=req.deadline,
            grace=req.grace,
            on_output=tee(*sinks),
        )
        scanner.finish()
        capture.finish()
    return result, scanner, capture


class _Writer:
    """Commit, gates and push for a write stage; records a check for each."""

    def __init__(self, req: StageRequest, setup: _Setup, head_before: str | None) -> None:
        self.req, self.setup, self.head_before = req, setup, head_before
        self.checks: list[Check] = []
        self.gates: list[GateResult] = []
        self.salvage = SalvageBundle()
        self.fault: InfraFault | None = None
        self.timings: dict[str, float] = {}
        self.hold_push = False

    def run(self, succeeded: bool) -> None:
        req, wd = self.req, self.setup.workdir
        now = gitwork.current_branch(wd)
        on_branch = now == req.expected_branch
        self.checks.append(
            Check(name="branch", status="passed", reason=f"HEAD is on {now}")
            if on_branch
            else Check(
                name="branch",
                status="failed",
                reason=f"the agent left HEAD on {now or 'a detached HEAD'}, "
                f"not {req.expected_branch}; nothing was committed or pushed",
            )
        )
        if not on_branch:
            return
        if succeeded:
            self._commit()
            if req.stage == "plan":
                self._plan_check()
            self._gates()
        else:
            self._salvage()
        self._push()

    def _commit(self) -> None:
        start = time.monotonic()
        message = f"odw: {self.req.stage} {self.req.task}\n\nODW-Token: {self.req.token}\n"
        sha = gitwork.commit_all(self.setup.workdir, self.req.identity, message)
        self.timings["commit"] = time.monotonic() - start
        reason = f"committed {sha} as {self.req.identity.name}" if sha else "nothing left to commit"
        self.checks.append(Check(name="commit", status="passed", reason=reason))

    def _plan_check(self) -> None:
        """The ExecPlan is committed and keeps the contract (sections, `Status: DRAFT`)."""
        rel = execplan_path(self.req.task)
        rev = gitwork.head(self.setup.workdir)
        text = (
            None
            if rev is None
            else gitwork.file_in_commit(self.setup.workdir, rev, rel, MAX_PLAN_BYTES)
        )
        if text is None:
            reason = f"{rel} was not written (or is larger than {MAX_PLAN_BYTES} bytes)"
            self.checks.append(Check(name="execplan", status="failed", reason=reason))
            return
        self.checks.append(Check(name="execplan", status="passed", reason=f"{rel} is committed"))
        problems = plan_stage_problems(text)
        self.checks.append(
            Check(name="execplan_contract", status="failed", reason="; ".join(problems))
            if problems
            else Check(
                name="execplan_contract",
                status="passed",
                reason="every required section is present and Status is DRAFT",
            )
        )
        # A plan that breaks the contract stays off origin: its Status would
        # decide where a `continue` resume starts.
        self.hold_push = bool(problems)

    def _gates(self) -> None:
        if self.req.stage not in GATE_STAGES:
            return
        if not self.req.gates:
            self.checks.append(Check(name="gates", status="skipped", reason="no gates configured"))
            return
        start = time.monotonic()
        self.gates = run_gates(
            self.req.gates, workdir=self.setup.workdir, timeout=self.req.gate_timeout
        )
        self.timings["gates"] = time.monotonic() - start
        bad = [g.command for g in self.gates if g.status != "passed"]
        self.checks.append(
            Check(name="gates", status="failed", reason="failed: " + "; ".join(bad))
            if bad
            else Check(name="gates", status="passed", reason=f"{len(self.gates)} gate(s) passed")
        )

    def _salvage(self) -> None:
        dirty = [(e.path, e.deleted) for e in gitwork.status(self.setup.workdir)]
        paths = salvage.candidates(dirty)
        self.salvage = salvage.collect(self.setup.workdir, paths, self.req.out_dir / "salvage")

    def _push(self) -> None:
        if not self.req.push:
            self.checks.append(Check(name="push", status="skipped", reason="push disabled"))
            return
        if self.hold_push:
            reason = "the ExecPlan breaks the contract (execplan_contract); nothing was pushed"
            self.checks.append(Check(name="push", status="skipped", reason=reason))
            return
        if self.setup.push_url is None:
            reason = f"the checkout has no remote named {self.req.remote}; commits stay local"
            self.checks.append(Check(name="push", status="skipped", reason=reason))
            return
        if gitwork.head(self.setup.workdir) == self.head_before:
            self.checks.append(Check(name="push", status="skipped", reason="no new commits"))
            return
        start = time.monotonic()
        try:
            sha = gitwork.push(
                self.setup.workdir,
                self.setup.push_url,
                self.req.expected_branch,
                token=self.req.push_token,
            )
        except GitError as exc:  # PushNotLanded included: a push is proved on the remote
            self.fault = "push-failed"
            self.checks.append(Check(name="push", status="failed", reason=str(exc)))
            return
        finally:
            self.timings["push"] = time.monotonic() - start
        reason = f"pushed {sha} to {self.req.expected_branch}; the remote shows it"
        self.checks.append(Check(name="push", status="passed", reason=reason))


def _refused_config(setup: _Setup) -> Check | None:
    """A failed check when the agent wrote a risky git configuration key, else None.

    Single-valued keys are overridden on every runner call anyway; these are the
    ones no override reaches (`url.*.pushInsteadOf`, filters, includes, ...).
    """
    keys = risky_config(config_entries(setup.workdir), setup.config)
    if not keys:
        return None
    return Check(
        name="git_config",
        status="failed",
        reason="the agent wrote git configuration the runner does not obey ("
        + ", ".join(keys)
        + "); nothing was committed, gated or pushed",
    )


def _after_agent(
    req: StageRequest, setup: _Setup, writer: _Writer, succeeded: bool
) -> tuple[bool, str | None, list[str]]:
    """Write-stage work, then the evidence: (dirty, head after, new commits)."""
    wd = setup.workdir
    refused = _refused_config(setup)
    if refused is not None:
        # Even `git status` could run a filter the agent configured: stop here.
        writer.checks.append(refused)
        head_after = gitwork.head(wd)
        return True, head_after, gitwork.commits_between(wd, writer.head_before, head_after)
    if req.stage in WRITE_STAGES:
        writer.run(succeeded=succeeded)
    head_after = gitwork.head(wd)
    dirty = bool(gitwork.status(wd))
    return dirty, head_after, gitwork.commits_between(wd, writer.head_before, head_after)


def run_stage(req: StageRequest) -> Verdict:
    """Run one attempt and write verdict.json, summary.md and the GitHub outputs."""
    started = time.monotonic()
    setup = prepare(req)
    req.out_dir.mkdir(parents=True, exist_ok=True)
    prompt_file = req.out_dir / "prompt.md"
    report_file = req.out_dir / "report.json"
    prompt_file.write_text(setup.prompt, "utf-8")
    report_file.unlink(missing_ok=True)
    head_before = gitwork.head(setup.workdir)

    result, scanner, capture = _run_agent(req, setup, prompt_file, report_file)
    seen = scanner.seen
    checks_ = [
        checks.marker_check(scanner, result, req.deadline),
        checks.exit_check(result, req.deadline, marker_seen=seen),
    ]
    fault = checks.fault_of(result, marker_seen=seen)
    fields: dict[str, object] = {}
    if req.stage in ("design-review", "review", "assess"):
        check, review, assessment = checks.read_report(report_file, req.stage)
        checks_.append(check)
        fields.update(report=review, assessment=assessment)
    timings = {"agent": result.duration}
    writer = _Writer(req, setup, head_before)
    try:
        dirty, head_after, commits = _after_agent(req, setup, writer, seen and fault is None)
    except GitError as exc:
        writer.checks.append(Check(name="runner", status="failed", reason=str(exc)))
        fault = fault or "runner"
        dirty, head_after, commits = True, None, []
    checks_ += writer.checks
    fault = fault or writer.fault
    timings.update(writer.timings)
    timings["total"] = time.monotonic() - started
    verdict = Verdict(
        stage=req.stage,  # type: ignore[arg-type]
        task=req.task,
        token=req.token,
        passed=fault is None and all(c.status != "failed" for c in checks_),
        checks=checks_,
        gates=writer.gates,
        branch=setup.branch,
        head_before=head_before,
        head_after=head_after,
        commits=commits,
        dirty=dirty,
        salvage=writer.salvage,
        fault=fault,
        exit_code=result.exit_code,
        deadline=req.deadline,
        output_bytes=capture.total,
        timings={k: round(v, 3) for k, v in timings.items()},
        output_tail=capture.tail_text(TAIL_CHARS),
        **fields,  # type: ignore[arg-type]
    )
    write_outputs(verdict, req.out_dir, req.verdict_name)
    return verdict


def write_outputs(verdict: Verdict, out_dir: Path, name: str = "verdict.json") -> Path:
    """The verdict and summary.md in `out_dir`, plus GitHub's step summary and outputs."""
    path = out_dir / name
    path.write_text(verdict.model_dump_json(by_alias=True, indent=2) + "\n", "utf-8")
    summary = render_summary(verdict)
    (out_dir / "summary.md").write_text(summary, "utf-8")
    step_summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if step_summary:
        with Path(step_summary).open("a", encoding="utf-8") as fh:
            fh.write(summary)
    github_output = os.environ.get("GITHUB_OUTPUT")
    if github_output:
        with Path(github_output).open("a", encoding="utf-8") as fh:
            fh.write(f"passed={'true' if verdict.passed else 'false'}\nverdict={path}\n")
    return path
