"""The local runner: worktrees on real git, concurrent tasks, branches that stay."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from app.core.execplan import REQUIRED_SECTIONS
from app.core.identity import Identity
from app.local.stage_runner import LocalRunnerError, run_local_stage
from tests.support import git

PLANNER = (
    f"SECTIONS = {list(REQUIRED_SECTIONS)!r}\n"
    + """
import os, pathlib, subprocess
p = pathlib.Path(os.environ["ODW_EXECPLAN_PATH"])
p.parent.mkdir(parents=True, exist_ok=True)
branch = subprocess.check_output(["git", "branch", "--show-current"], text=True)
sections = "".join(f"## {name}\\n\\nText.\\n\\n" for name in SECTIONS)
p.write_text(f"Status: DRAFT\\nbranch: {branch}\\n\\n{sections}")
print(os.environ["ODW_COMPLETION_WORD"], os.environ["ODW_COMPLETION_TOKEN"])
"""
)

IMPLEMENTER = """
import os, pathlib
plan = pathlib.Path(os.environ["ODW_EXECPLAN_PATH"])
assert plan.exists(), "the implement stage starts from the planned branch"
pathlib.Path(f"task_{os.environ['ODW_TASK_ID'].replace('.', '_')}.py").write_text("x = 1\\n")
print(os.environ["ODW_COMPLETION_WORD"], os.environ["ODW_COMPLETION_TOKEN"])
"""


def worktrees(clone: Path) -> list[str]:
    return [
        ln
        for ln in git(clone, "worktree", "list", "--porcelain").splitlines()
        if ln.startswith("worktree ")
    ]


def test_plan_then_implement_on_the_remote_task_branch(repo, make_agent, tmp_path) -> None:
    git(repo.clone, "checkout", "-q", "main")
    planner = make_agent("planner", PLANNER)
    run = run_local_stage(
        repo.clone,
        base="main",
        task="1.1.1",
        stage="plan",
        token="tok-plan-0001",
        agent=str(planner),
        deadline=10,
        grace=0.5,
        identity=Identity(name="local-bot", email="local@example.com"),
    )
    assert run.verdict.passed, run.verdict.checks
    assert run.exit_code == 0
    planned = repo.origin_head("roadmap-1-1-1")
    assert planned == run.verdict.head_after
    assert git(repo.origin, "log", "-1", "--format=%an", "roadmap-1-1-1").strip() == "local-bot"
    assert "branch: roadmap-1-1-1" in git(
        repo.origin, "show", "roadmap-1-1-1:docs/execplans/1-1-1.md"
    )

    implementer = make_agent("implementer", IMPLEMENTER)
    run2 = run_local_stage(
        repo.clone,
        base="main",
        task="1.1.1",
        stage="implement",
        token="tok-impl-0001",
        agent=str(implementer),
        gates=["test -f task_1_1_1.py"],
        deadline=10,
        grace=0.5,
    )
    assert run2.verdict.passed, run2.verdict.checks
    assert run2.verdict.head_before == planned
    assert git(repo.origin, "rev-parse", "roadmap-1-1-1~1").strip() == planned
    assert worktrees(repo.clone) == [f"worktree {repo.clone}"]
    assert (run2.out_dir / "verdict.json").is_file()


def test_concurrent_tasks_from_threads(repo, make_agent) -> None:
    git(repo.clone, "checkout", "-q", "main")
    planner = make_agent("planner", PLANNER)
    results: dict[str, object] = {}

    def go(task: str) -> None:
        try:
            results[task] = run_local_stage(
                repo.clone,
                base="main",
                task=task,
                stage="plan",
                token=f"tok-{task.replace('.', '-')}-par",
                agent=str(planner),
                deadline=20,
                grace=0.5,
            )
        except Exception as exc:  # reported below
            results[task] = exc

    threads = [threading.Thread(target=go, args=(t,)) for t in ("1.1.1", "1.1.2", "1.2.1")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    for task in ("1.1.1", "1.1.2"):
        run = results[task]
        assert not isinstance(run, Exception), run
        assert run.verdict.passed, run.verdict.checks  # type: ignore[union-attr]
        branch = f"roadmap-{task.replace('.', '-')}"
        assert repo.origin_head(branch) == run.verdict.head_after  # type: ignore[union-attr]
    # 1.2.1 is not in the roadmap: a clear error, and its worktree is gone too.
    assert isinstance(results["1.2.1"], LocalRunnerError)
    assert "task 1.2.1 is not in docs/roadmap.md" in str(results["1.2.1"])
    assert worktrees(repo.clone) == [f"worktree {repo.clone}"]


def test_failed_stage_keeps_the_branch_and_its_commits(repo, make_agent) -> None:
    git(repo.clone, "checkout", "-q", "main")
    agent = make_agent(
        "committer-crash",
        """
        import subprocess, sys
        open("partial.py", "w").write("y = 2\\n")
        subprocess.run(["git", "add", "partial.py"], check=True)
        subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-qm", "wip"],
                       check=True)
        sys.exit(1)
        """,
    )
    run = run_local_stage(
        repo.clone,
        base="main",
        task="1.1.1",
        stage="implement",
        token="tok-crash-001",
        agent=str(agent),
        deadline=10,
        grace=0.5,
    )
    v = run.verdict
    assert not v.passed and v.fault is None and run.exit_code == 1
    assert len(v.commits) == 1
    assert repo.origin_head("roadmap-1-1-1") == v.commits[0]
    assert worktrees(repo.clone) == [f"worktree {repo.clone}"]


def test_not_a_repository_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(LocalRunnerError, match="not a git repository"):
        run_local_stage(
            tmp_path, base="main", task="1.1.1", stage="plan", token="tok-xxxxxxx1", agent="true"
        )


def test_risky_config_the_agent_writes_into_the_shared_clone_is_undone(
    repo, make_agent, tmp_path
) -> None:
    """A worktree shares its clone's .git/config: what the agent adds there is refused
    for its own stage and removed afterwards, and the owner's own keys stay."""
    git(repo.clone, "checkout", "-q", "main")
    git(repo.clone, "config", "url./srv/mirror/.insteadOf", "/srv/owner/")
    evil = tmp_path / "evil.git"
    agent = make_agent(
        "rewriter",
        f"""
        import os, pathlib, subprocess
        pathlib.Path("x.py").write_text("x = 1\\n")
        subprocess.run(["git", "config", "url.{evil}.pushInsteadOf", "{repo.origin}"], check=True)
        subprocess.run(["git", "config", "--add", "url./srv/mirror/.insteadOf", "/elsewhere/"],
                       check=True)
        print(os.environ["ODW_COMPLETION_WORD"], os.environ["ODW_COMPLETION_TOKEN"])
        """,
    )
    run = run_local_stage(
        repo.clone,
        base="main",
        task="1.1.1",
        stage="implement",
        token="tok-impl-0002",
        agent=str(agent),
        deadline=10,
        grace=0.5,
    )
    failed = {c.name: c.reason for c in run.verdict.checks if c.status == "failed"}
    assert "pushinsteadof" in failed["git_config"]
    assert repo.origin_head("roadmap-1-1-1") is None
    config = git(repo.clone, "config", "--local", "--list")
    assert "pushinsteadof" not in config.lower()
    assert (
        git(repo.clone, "config", "--get-all", "url./srv/mirror/.insteadOf").strip()
        == "/srv/owner/"
    )
