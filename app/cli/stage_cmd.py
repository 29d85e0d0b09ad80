"""`odw stage`: run one stage attempt on a checkout and write its verdict.

This is what `action.yml` runs on a GitHub Actions runner and what the local
runner runs in a git worktree. Exit 0 when the stage passed, 1 when it failed,
2 when it could not start as asked.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from pydantic import ValidationError

from actions.gates import DEFAULT_GATE_TIMEOUT, gates_verdict
from actions.proctree import enable_subreaper
from actions.stage import DEFAULT_GRACE, StageRequest, StageSetupError, run_stage
from app.cli.commands import command_help
from app.cli.errors import UsageError
from app.core.identity import RUNNER_IDENTITY, Identity
from app.core.naming import slug, task_branch
from app.core.repo_config import ConfigProblem, RepoConfig, read_repo_config
from app.core.verdict import AGENT_STAGES

MAX_CONTEXT_BYTES = 256 * 1024


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "stage",
        help=command_help("stage"),
        description="Run the agent for one stage on a checked-out task branch, "
        "judge it by its completion marker, and write verdict.json.",
    )
    p.add_argument("--stage", required=True, choices=(*AGENT_STAGES, "gates"))
    p.add_argument("--task", required=True, metavar="ID", help="roadmap task id, e.g. 1.2.3")
    p.add_argument("--token", required=True, help="this attempt's random token")
    p.add_argument("--workdir", default=".", type=Path, metavar="DIR", help="the task checkout")
    p.add_argument("--agent", metavar="CMD", help="agent command (default: `agent` in --config)")
    p.add_argument("--deadline", type=float, metavar="SECONDS", help="agent deadline")
    p.add_argument(
        "--gate",
        action="append",
        default=None,
        metavar="CMD",
        help="gate command run after write stages (repeatable; default: `gates` in --config)",
    )
    p.add_argument("--gate-timeout", type=float, default=DEFAULT_GATE_TIMEOUT, metavar="SECONDS")
    p.add_argument(
        "--grace",
        type=float,
        default=DEFAULT_GRACE,
        metavar="SECONDS",
        help="time between SIGTERM and SIGKILL when the deadline expires",
    )
    p.add_argument(
        "--out", type=Path, metavar="FILE", help="verdict path; other files go beside it"
    )
    p.add_argument("--config", type=Path, metavar="FILE", help="an odw.yml to read defaults from")
    p.add_argument("--branch", help="task branch (default roadmap-<slug>)")
    p.add_argument("--remote", default="origin", help="remote to push the task branch to")
    p.add_argument("--no-push", action="store_true", help="commit but do not push")
    p.add_argument(
        "--push-token-file",
        type=Path,
        metavar="FILE",
        help="a file holding the token the push authenticates with; it is read and deleted "
        "before the agent starts, and reaches only the runner's push (through GIT_ASKPASS)",
    )
    p.add_argument("--identity-name", help="committer name for the runner's commits")
    p.add_argument("--identity-email", help="committer e-mail for the runner's commits")
    p.add_argument(
        "--context", type=Path, metavar="FILE", help="findings or failures to quote in the prompt"
    )
    p.add_argument("--quiet", action="store_true", help="do not echo agent output to stderr")
    p.set_defaults(func=run_stage_cmd)


def _config(args: argparse.Namespace) -> RepoConfig:
    if args.config is None:
        return RepoConfig()
    try:
        data = Path(args.config).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {args.config}: {exc.strerror or exc}") from None
    try:
        return read_repo_config(data, str(args.config))
    except ConfigProblem as problem:
        raise UsageError(str(problem)) from None


def _identity(args: argparse.Namespace, config: RepoConfig) -> Identity:
    base = config.identity or RUNNER_IDENTITY
    try:
        return Identity(
            name=args.identity_name or base.name, email=args.identity_email or base.email
        )
    except ValidationError as exc:
        problems = "; ".join(f"{e['loc'][0]}: {e['msg']}" for e in exc.errors())
        raise UsageError(f"invalid --identity-name/--identity-email ({problems})") from None


def _push_token(path: Path | None) -> str | None:
    """Read the push token and delete its file, so the agent cannot find it there."""
    if path is None:
        return None
    try:
        token = path.read_text("utf-8").strip()
        path.unlink()
    except OSError as exc:
        raise UsageError(f"cannot read --push-token-file {path}: {exc.strerror or exc}") from None
    return token or None


def _context(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        data = path.read_bytes()[:MAX_CONTEXT_BYTES]
    except OSError as exc:
        raise UsageError(f"cannot read --context {path}: {exc.strerror or exc}") from None
    return data.decode("utf-8", errors="replace")


def default_out(task: str, token: str) -> Path:
    root = Path(os.environ.get("RUNNER_TEMP") or tempfile.gettempdir())
    return root / f"odw-{slug(task)}-{token}" / "verdict.json"


def run_gates_cmd(args: argparse.Namespace, config: RepoConfig) -> int:
    """`--stage gates`: no agent; the configured gates on the checkout, as local mode runs them."""
    _push_token(args.push_token_file)  # nothing is pushed here; the file still goes
    out = args.out or default_out(args.task, args.token)
    out.parent.mkdir(parents=True, exist_ok=True)
    verdict = gates_verdict(
        args.workdir,
        task=args.task,
        token=args.token,
        gates=tuple(args.gate if args.gate is not None else config.gates),
        gate_timeout=args.gate_timeout,
        branch=args.branch or task_branch(args.task),
        where="the runner's checkout",
    )
    out.write_text(verdict.model_dump_json(by_alias=True, indent=2) + "\n", "utf-8")
    state = "passed" if verdict.passed else "failed"
    print(f"odw stage: gates {args.task} {state}; verdict: {out}")
    return 0 if verdict.passed else 1


def run_stage_cmd(args: argparse.Namespace) -> int:
    config = _config(args)
    if args.stage == "gates":
        return run_gates_cmd(args, config)
    agent = args.agent if args.agent is not None else config.agent
    if not agent:
        raise UsageError("no agent command: pass --agent or set `agent` in --config")
    out = args.out or default_out(args.task, args.token)
    request = StageRequest(
        stage=args.stage,
        task=args.task,
        token=args.token,
        workdir=args.workdir,
        agent=agent,
        out_dir=out.parent,
        deadline=args.deadline or config.config.deadline(args.stage),
        grace=args.grace,
        gates=tuple(args.gate if args.gate is not None else config.gates),
        gate_timeout=args.gate_timeout,
        branch=args.branch,
        remote=args.remote,
        push=not args.no_push,
        identity=_identity(args, config),
        push_token=_push_token(args.push_token_file),
        context_text=_context(args.context),
        echo=None if args.quiet else sys.stderr.buffer,
        verdict_name=out.name,
    )
    enable_subreaper()
    try:
        verdict = run_stage(request)
    except StageSetupError as exc:
        raise UsageError(str(exc)) from None
    path = out
    state = "passed" if verdict.passed else "failed"
    failed = [c.name for c in verdict.checks if c.status == "failed"]
    detail = f" ({', '.join(failed)})" if failed else ""
    print(f"odw stage: {args.stage} {args.task} {state}{detail}; verdict: {path}")
    return 0 if verdict.passed else 1
