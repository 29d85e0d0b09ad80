"""Local mode's stand-in for an Actions runner: `odw stage` in a git worktree.

The worktree starts from the remote's task branch when it exists, else from the
remote's base branch; `odw stage` runs there as a subprocess (its own session,
so a hung runner is killed with everything it started; started through
`app.python_child`, so nothing in the worktree is imported as ODW), pushes write stages
to the remote, and the worktree is always removed afterwards (the branch stays).
Safe to call from several threads at once for different tasks: the steps that
touch the shared repository (fetch, worktree add/remove) hold a per-repository
lock; the stage itself runs unlocked.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock
from pydantic import ValidationError

from actions.gates import DEFAULT_GATE_TIMEOUT, gates_verdict
from actions.stage import DEFAULT_DEADLINE, DEFAULT_GRACE
from app.core.identity import Identity
from app.core.naming import slug, task_branch
from app.core.verdict import AGENT_STAGES, WRITE_STAGES, Verdict, valid_token
from app.gitops.runner import NETWORK_TIMEOUT, GitError, config_entries, git, risky_config
from app.python_child import odw_argv

# Time `odw stage` gets beyond the agent's deadline and gates before it is killed.
RUNNER_MARGIN = 120.0
_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


class LocalRunnerError(Exception):
    """The stage could not be run (bad request, git failure, runner crash)."""


@dataclass(frozen=True)
class StageRun:
    """One local stage attempt: the verdict and where its files are."""

    verdict: Verdict
    exit_code: int
    out_dir: Path
    stderr: str


@contextlib.contextmanager
def _repo_lock(common_dir: Path) -> Iterator[None]:
    key = str(common_dir)
    with _locks_guard:
        lock = _locks.setdefault(key, threading.Lock())
    with lock, FileLock(str(common_dir / "odw-worktree.lock"), timeout=NETWORK_TIMEOUT):
        yield


def _common_dir(clone: Path) -> Path:
    out = git(clone, "rev-parse", "--path-format=absolute", "--git-common-dir").stdout
    return Path(out.strip())


def _add_worktree(
    clone: Path,
    path: Path,
    *,
    remote: str,
    base: str,
    branch: str,
    detach: bool = False,
    fresh: str | None = None,
) -> str:
    """Fetch and check `branch` out at `path`; returns the start point used.

    With `detach` the checkout is a detached HEAD at the same commit, so several
    read-only attempts of one task (the two review lanes) can run side by side.
    With `fresh` (a retry's first attempt) the remote branch's work is kept on
    the branch `fresh` and the task branch starts again from the base.
    """
    listed = git(
        clone, "ls-remote", "--heads", remote, f"refs/heads/{branch}", timeout=NETWORK_TIMEOUT
    ).stdout
    if fresh is not None and listed.strip():
        head = listed.split()[0]
        git(clone, "fetch", "--no-tags", "--quiet", remote, head, timeout=NETWORK_TIMEOUT)
        git(clone, "push", "--quiet", remote, f"{head}:refs/heads/{fresh}", timeout=NETWORK_TIMEOUT)
        git(clone, "push", "--quiet", remote, "--delete", branch, timeout=NETWORK_TIMEOUT)
        listed = ""
    specs = [f"+refs/heads/{base}:refs/remotes/{remote}/{base}"]
    if listed.strip():
        specs.append(f"+refs/heads/{branch}:refs/remotes/{remote}/{branch}")
    git(clone, "fetch", "--no-tags", "--quiet", remote, *specs, timeout=NETWORK_TIMEOUT)
    start = f"refs/remotes/{remote}/{branch if listed.strip() else base}"
    git(clone, "worktree", "prune")
    if detach:
        git(clone, "worktree", "add", "--quiet", "--detach", str(path), start)
    else:
        git(clone, "worktree", "add", "--quiet", "--no-track", "-B", branch, str(path), start)
    return start


def remove_worktree(clone: Path, path: Path) -> None:
    """Remove a worktree of `clone` (one a dead attempt left behind, say); never raises."""
    try:
        common = _common_dir(Path(clone).resolve())
    except GitError:
        shutil.rmtree(path, ignore_errors=True)
        return
    with _repo_lock(common):
        _remove_worktree(clone, path)


def _remove_worktree(clone: Path, path: Path) -> None:
    with contextlib.suppress(GitError):
        git(clone, "worktree", "remove", "--force", str(path))
    shutil.rmtree(path, ignore_errors=True)
    with contextlib.suppress(GitError):
        git(clone, "worktree", "prune")


def _stage_argv(
    *,
    stage: str,
    task: str,
    token: str,
    agent: str,
    out: Path,
    branch: str,
    remote: str,
    gates: Sequence[str],
    deadline: float,
    gate_timeout: float,
    grace: float,
    identity: Identity | None,
    context_file: Path | None,
) -> list[str]:
    argv = odw_argv("stage", "--stage", stage, "--task", task)
    argv += ["--token", token, "--workdir", ".", "--agent", agent, "--out", str(out)]
    argv += ["--branch", branch, "--remote", remote, "--deadline", str(deadline)]
    argv += ["--gate-timeout", str(gate_timeout), "--grace", str(grace), "--quiet"]
    for gate in gates:
        argv += ["--gate", gate]
    if identity is not None:
        argv += ["--identity-name", identity.name, "--identity-email", identity.email]
    if context_file is not None:
        argv += ["--context", str(context_file)]
    return argv


@dataclass(frozen=True)
class _Checkout:
    worktree: Path
    out_dir: Path
    branch: str
    start: str


@contextlib.contextmanager
def _task_checkout(
    clone: Path,
    *,
    task: str,
    token: str,
    base: str,
    remote: str,
    branch: str | None,
    out_dir: Path | None,
    detach: bool,
    on_worktree: Callable[[Path], None] | None,
    fresh: str | None = None,
) -> Iterator[_Checkout]:
    """A worktree of the task branch (else the base) that is always removed after.

    Git failures while it exists surface as LocalRunnerError; the branch stays.
    """
    if not valid_token(token):
        raise LocalRunnerError("the token must be 8-128 characters of A-Z a-z 0-9 _ -")
    clone = Path(clone).resolve()
    branch = branch or task_branch(task)
    out_dir = Path(out_dir) if out_dir else Path(tempfile.mkdtemp(prefix=f"odw-{slug(task)}-"))
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        common = _common_dir(clone)
    except GitError as exc:
        raise LocalRunnerError(f"{clone} is not a git repository: {exc}") from None
    holder = Path(tempfile.mkdtemp(prefix=f"odw-wt-{slug(task)}-"))
    worktree = holder / "checkout"
    if on_worktree is not None:
        on_worktree(worktree)
    try:
        with _repo_lock(common):
            start = _add_worktree(
                clone, worktree, remote=remote, base=base, branch=branch, detach=detach,
                fresh=fresh,
            )  # fmt: skip
        yield _Checkout(worktree, out_dir, branch, start)
    except GitError as exc:
        raise LocalRunnerError(str(exc)) from None
    finally:
        with _repo_lock(common):
            _remove_worktree(clone, worktree)
        shutil.rmtree(holder, ignore_errors=True)


def run_local_stage(
    clone: Path,
    *,
    base: str,
    task: str,
    stage: str,
    token: str,
    agent: str,
    gates: Sequence[str] = (),
    deadline: float = DEFAULT_DEADLINE,
    gate_timeout: float = DEFAULT_GATE_TIMEOUT,
    grace: float = DEFAULT_GRACE,
    remote: str = "origin",
    branch: str | None = None,
    identity: Identity | None = None,
    context_text: str | None = None,
    out_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    on_worktree: Callable[[Path], None] | None = None,
    on_spawn: Callable[[int], None] | None = None,
    fresh: str | None = None,
) -> StageRun:
    """Run one stage for `task` in a fresh worktree of `clone` and return its verdict.

    `clone` is any local repository with `remote` configured (the remote is the
    forge: a bare repository in local mode). The verdict, prompt, capped agent
    log and salvage bundle are left in `out_dir` (a new temporary directory
    when not given), which the caller owns. `on_worktree` learns the worktree's
    path before it is created and `on_spawn` the runner's pid (its own process
    group) once started, so a caller that dies can be cleaned up after.
    """
    if stage not in AGENT_STAGES:
        raise LocalRunnerError(f"unknown stage {stage!r} (one of {', '.join(AGENT_STAGES)})")
    with _task_checkout(
        clone,
        task=task,
        token=token,
        base=base,
        remote=remote,
        branch=branch,
        out_dir=out_dir,
        detach=stage not in WRITE_STAGES,
        on_worktree=on_worktree,
        fresh=fresh if stage in WRITE_STAGES else None,
    ) as co:
        context_file = None
        if context_text is not None:
            context_file = co.out_dir / "context.md"
            context_file.write_text(context_text, "utf-8")
        argv = _stage_argv(
            stage=stage,
            task=task,
            token=token,
            agent=agent,
            out=co.out_dir / "verdict.json",
            branch=co.branch,
            remote=remote,
            gates=gates,
            deadline=deadline,
            gate_timeout=gate_timeout,
            grace=grace,
            identity=identity,
            context_file=context_file,
        )
        budget = deadline + grace + len(gates) * (gate_timeout + grace) + RUNNER_MARGIN
        before = config_entries(clone)
        try:
            code, stderr = _run_runner(argv, co.worktree, env, budget, on_spawn)
        finally:
            _restore_config(Path(clone), before)
        return StageRun(_read_verdict(co.out_dir, code, stderr), code, co.out_dir, stderr)


def _restore_config(clone: Path, before: dict[str, tuple[str, ...]]) -> None:
    """Undo risky keys the agent wrote into the clone's shared `.git/config`.

    A worktree shares its clone's configuration, so what the agent wrote there
    would steer every later git call of local mode (fetches, salvage pushes).
    `odw stage` already refused to work under it; this puts the owner's back.
    """
    for key in risky_config(config_entries(clone), before):
        git(clone, "config", "--local", "--unset-all", key, check=False)
        for value in before.get(key, ()):
            git(clone, "config", "--local", "--add", key, value, check=False)


def _run_runner(
    argv: list[str],
    cwd: Path,
    env: Mapping[str, str] | None,
    budget: float,
    on_spawn: Callable[[int], None] | None = None,
) -> tuple[int, str]:
    full_env = {**os.environ, **(env or {})}
    for name in ("GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT"):
        full_env.pop(name, None)
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    if on_spawn is not None:
        on_spawn(proc.pid)
    try:
        _, stderr = proc.communicate(timeout=budget)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        _, stderr = proc.communicate()
        raise LocalRunnerError(f"odw stage did not finish within {budget:.0f}s") from None
    return proc.returncode, stderr or ""


def _read_verdict(out_dir: Path, code: int, stderr: str) -> Verdict:
    path = out_dir / "verdict.json"
    if code not in (0, 1) or not path.is_file():
        last = stderr.strip().splitlines()[-1:] or [f"exit code {code}"]
        raise LocalRunnerError(f"odw stage failed to run: {last[0]}")
    try:
        return Verdict.model_validate_json(path.read_bytes())
    except ValidationError as exc:
        raise LocalRunnerError(f"odw stage wrote an invalid verdict: {exc}") from None


def run_local_gates(
    clone: Path,
    *,
    base: str,
    task: str,
    token: str,
    gates: Sequence[str],
    gate_timeout: float = DEFAULT_GATE_TIMEOUT,
    remote: str = "origin",
    branch: str | None = None,
    out_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    on_worktree: Callable[[Path], None] | None = None,
) -> StageRun:
    """The `gates` stage: the configured commands on the task branch, no agent.

    Read-only: the worktree is checked out from the remote's task branch (the
    base when it has none), every gate runs even after one fails, nothing is
    committed or pushed, and the worktree is removed. The verdict says plainly
    that no agent ran: its marker and exit-code checks are skipped with that
    reason, and the core judges an agentless stage by its gates alone.
    """
    with _task_checkout(
        clone,
        task=task,
        token=token,
        base=base,
        remote=remote,
        branch=branch,
        out_dir=out_dir,
        detach=True,
        on_worktree=on_worktree,
    ) as co:
        verdict = gates_verdict(
            co.worktree,
            task=task,
            token=token,
            gates=gates,
            gate_timeout=gate_timeout,
            branch=co.branch,
            where=co.start,
            env=env,
        )
    out_dir = co.out_dir
    (out_dir / "verdict.json").write_text(
        verdict.model_dump_json(by_alias=True, indent=2) + "\n", "utf-8"
    )
    return StageRun(verdict, 0 if verdict.passed else 1, out_dir, "")
