"""Write-stage evidence: salvage bundles, gates, reports, usage errors, job summary."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from app.core.config import RunConfig
from app.core.verdict import completion_marker
from tests.actions.conftest import alive
from tests.support import git

TOKEN = "tok-current-1"
MARKER = completion_marker(TOKEN)


def checks(result) -> dict[str, tuple[str, int | None]]:
    return {c.name: (c.status, c.code) for c in result.verdict.checks}


def test_execplan_edit_then_crash_is_bundled_not_committed(repo, make_agent, stage) -> None:
    agent = make_agent(
        "crasher",
        """
        import os, pathlib, sys
        plan = pathlib.Path("docs/execplans/1-1-1.md")
        plan.parent.mkdir(parents=True, exist_ok=True)
        plan.write_text("Status: IN PROGRESS\\n- [x] step one\\n")
        pathlib.Path("src.py").write_text("half done\\n")
        sys.exit(2)
        """,
    )
    before = git(repo.clone, "rev-parse", "HEAD").strip()
    result = stage(repo.clone, agent)
    v = result.verdict
    assert result.code == 1 and v.fault is None
    assert v.salvage.files == ["docs/execplans/1-1-1.md"]
    assert v.salvage.rejected == []
    bundled = result.out_dir / "salvage" / "docs" / "execplans" / "1-1-1.md"
    assert bundled.read_text() == "Status: IN PROGRESS\n- [x] step one\n"
    assert not (result.out_dir / "salvage" / "src.py").exists()
    assert v.dirty is True
    assert v.head_after == before and v.commits == []
    assert checks(result)["push"] == ("skipped", None)
    assert "commit" not in checks(result)
    assert repo.origin_head("roadmap-1-1-1") is None


def test_planted_symlinks_and_escapes_are_rejected_by_name(
    repo, make_agent, stage, tmp_path
) -> None:
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("do not copy\n")
    agent = make_agent(
        "planter",
        f"""
        import os, pathlib
        d = pathlib.Path("docs/execplans")
        d.mkdir(parents=True, exist_ok=True)
        (d / "1-1-1.md").write_text("real plan\\n")
        os.symlink({str(secret)!r}, d / "link.md")
        os.symlink("../../..", d / "up")
        os.symlink({str(secret.parent)!r}, d / "outdir")
        (d / "notes.txt").write_text("not markdown\\n")
        pathlib.Path("docs/execplans/../escaped.md").write_text("sideways\\n")
        os.link({str(secret)!r}, d / "hard.md")
        (d / "deeper").mkdir()
        (d / "deeper" / "nested.md").write_text("nested plan\\n")
        print("planted; no marker")
        """,
    )
    result = stage(repo.clone, agent)
    v = result.verdict
    assert v.salvage.files == ["docs/execplans/1-1-1.md"]
    rejected = {r.path: r.reason for r in v.salvage.rejected}
    assert rejected == {
        "docs/execplans/link.md": "symlink",
        "docs/execplans/outdir": "symlink",
        "docs/execplans/up": "symlink",
        "docs/execplans/notes.txt": "not a Markdown (.md) file",
        "docs/execplans/hard.md": "has more than one hard link (2)",
        "docs/execplans/deeper/nested.md": "in a nested folder (only docs/execplans/*.md)",
    }
    bundle = result.out_dir / "salvage"
    found = sorted(str(p.relative_to(bundle)) for p in bundle.rglob("*"))
    assert found == ["docs", "docs/execplans", "docs/execplans/1-1-1.md"]
    assert not any(p.is_symlink() for p in bundle.rglob("*"))
    assert "do not copy" not in (bundle / "docs/execplans/1-1-1.md").read_text()


def test_gates_run_after_the_agent_with_their_own_timeout(
    repo, make_agent, stage, tmp_path
) -> None:
    pid_file = tmp_path / "gate.pid"
    agent = make_agent("good", f"open('made.txt', 'w').write('x')\nprint({MARKER!r})\n")
    result = stage(
        repo.clone,
        agent,
        "--gate",
        "test -f made.txt && echo gate-one-ok",
        "--gate",
        "echo failing >&2; exit 4",
        "--gate",
        f"echo $$ > {pid_file}; sleep 60",
        "--gate-timeout",
        "1",
    )
    v = result.verdict
    assert result.code == 1
    assert [(g.status, g.code) for g in v.gates] == [("passed", 0), ("failed", 4), ("failed", 124)]
    assert "gate-one-ok" in v.gates[0].tail
    assert "failing" in v.gates[1].tail
    assert "timed out after 1s" in v.gates[2].tail
    assert not alive(int(pid_file.read_text()))
    assert checks(result)["gates"][0] == "failed"
    # The agent's work is committed and pushed even though a gate failed: the
    # fix stage needs it on the branch.
    assert checks(result)["push"][0] == "passed"
    assert repo.origin_head("roadmap-1-1-1") == v.head_after


def test_gates_are_skipped_when_the_agent_failed(repo, make_agent, stage, tmp_path) -> None:
    ran = tmp_path / "ran"
    agent = make_agent("quiet", "pass\n")
    result = stage(repo.clone, agent, "--gate", f"touch {ran}")
    assert result.verdict.gates == []
    assert not ran.exists()


@pytest.mark.parametrize(
    ("report", "status", "decision"),
    [
        ({"decision": "approve", "findings": []}, "passed", "approve"),
        (
            {
                "decision": "changes",
                "findings": [{"summary": "no tests", "path": "a.py", "line": 3}],
            },
            "passed",
            "changes",
        ),
        ({"decision": "maybe"}, "failed", None),
        (None, "failed", None),
    ],
    ids=["approve", "changes", "bad-decision", "missing"],
)
def test_review_report_is_schema_checked(repo, make_agent, stage, report, status, decision) -> None:
    write = (
        ""
        if report is None
        else f"open(os.environ['ODW_REPORT_FILE'], 'w').write({json.dumps(report)!r})\n"
    )
    agent = make_agent("reviewer", f"import os\n{write}print({MARKER!r})\n")
    result = stage(repo.clone, agent, stage="review")
    assert checks(result)["report_schema"][0] == status
    assert result.verdict.passed is (status == "passed")
    assert (result.verdict.report.decision if result.verdict.report else None) == decision
    assert git(repo.clone, "status", "--porcelain") == ""  # the report lives outside


def test_assess_report(repo, make_agent, stage) -> None:
    body = json.dumps({"classification": "adopt-partial", "summary": "half", "residualRisk": ["x"]})
    agent = make_agent(
        "assessor",
        f"import os\nopen(os.environ['ODW_REPORT_FILE'], 'w').write({body!r})\nprint({MARKER!r})\n",
    )
    result = stage(repo.clone, agent, stage="assess")
    assert result.code == 0
    assert result.verdict.assessment.classification == "adopt-partial"
    assert result.verdict.assessment.residual_risk == ["x"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--token", "bad token!"], "token"),
        (["--stage", "deploy"], "invalid choice"),
        (["--task", "9.9.9", "--stage", "review"], "task 9.9.9 is not in docs/roadmap.md"),
    ],
    ids=["token", "stage", "unknown-task"],
)
def test_bad_usage_exits_2_and_runs_nothing(repo, make_agent, run_odw, tmp_path, args, message):
    ran = tmp_path / "ran"
    agent = make_agent("never", f"open({str(ran)!r}, 'w')\n")
    base = {"--stage": "implement", "--task": "1.1.1", "--token": TOKEN}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        base[flag] = value
    flat = [x for kv in base.items() for x in kv]
    proc = run_odw(
        "stage",
        *flat,
        "--workdir",
        str(repo.clone),
        "--agent",
        str(agent),
        "--out",
        str(tmp_path / "o" / "verdict.json"),
    )
    assert proc.returncode == 2
    assert message in proc.stderr
    assert not ran.exists()


def test_dirty_checkout_on_another_branch_is_refused(repo, make_agent, stage, tmp_path) -> None:
    ran = tmp_path / "ran"
    agent = make_agent("never", f"open({str(ran)!r}, 'w')\n")
    (repo.clone / "README.md").write_text("local edit\n")
    result = stage(repo.clone, agent, "--branch", "roadmap-2-2-2")
    assert result.code == 2
    assert "needs roadmap-2-2-2 checked out" in result.stderr
    assert "uncommitted changes" in result.stderr
    assert not ran.exists()


def test_clean_checkout_is_switched_to_the_task_branch(repo, make_agent, stage) -> None:
    git(repo.clone, "checkout", "-q", "main")
    agent = make_agent("writer", f"open('work.txt', 'w').write('x')\nprint({MARKER!r})\n")
    result = stage(repo.clone, agent)
    assert result.code == 0, result.stderr
    head = git(repo.clone, "rev-parse", "--abbrev-ref", "HEAD").strip()
    assert head == "roadmap-1-1-1"
    assert repo.origin_head("roadmap-1-1-1") == result.verdict.head_after


def test_checkout_without_a_remote_commits_and_records_the_skipped_push(
    repo, make_agent, stage
) -> None:
    git(repo.clone, "remote", "remove", "origin")
    agent = make_agent("writer", f"open('work.txt', 'w').write('x')\nprint({MARKER!r})\n")
    result = stage(repo.clone, agent)
    assert result.code == 0, result.stderr
    push = result.verdict.check("push")
    assert push is not None and push.status == "skipped" and "no remote" in push.reason
    assert result.verdict.commits


def test_output_inside_the_checkout_is_refused(repo, make_agent, run_odw) -> None:
    proc = run_odw(
        "stage",
        "--stage",
        "review",
        "--task",
        "1.1.1",
        "--token",
        TOKEN,
        "--workdir",
        str(repo.clone),
        "--agent",
        "true",
        "--out",
        str(repo.clone / "v.json"),
    )
    assert proc.returncode == 2
    assert "outside the checkout" in proc.stderr


def test_job_summary_and_outputs_for_github(repo, make_agent, stage, tmp_path) -> None:
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs"
    agent = make_agent("hello", "print('hi @octocat \\u202e')\n")
    result = stage(
        repo.clone,
        agent,
        stage="review",
        env={"GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs)},
    )
    text = summary.read_text()
    assert "## ODW `review` for task 1.1.1: failed" in text
    assert "| completion_marker | failed |" in text
    assert "@octocat" not in text and "\u202e" not in text
    assert "\uff20octocat" in text
    lines = outputs.read_text().splitlines()
    assert "passed=false" in lines
    assert f"verdict={result.out_dir / 'verdict.json'}" in lines


def test_config_file_supplies_agent_gates_identity_and_deadline(
    repo, make_agent, run_odw, tmp_path
) -> None:
    agent = make_agent("good", f"open('f.txt', 'w').write('1')\nprint({MARKER!r})\n")
    config = tmp_path / "odw.yml"
    config.write_text(
        f"agent: {agent}\ngates: ['test -f f.txt']\nidentity: {{name: cfg-bot, email: c@b.org}}\n"
        "config:\n  stageDeadlines: {implement: 7}\n"
    )
    out = tmp_path / "o" / "verdict.json"
    proc = run_odw(
        "stage",
        "--stage",
        "implement",
        "--task",
        "1.1.1",
        "--token",
        TOKEN,
        "--workdir",
        str(repo.clone),
        "--config",
        str(config),
        "--out",
        str(out),
        "--quiet",
        env={**os.environ},
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text())
    assert data["deadline"] == 7
    assert [g["command"] for g in data["gates"]] == ["test -f f.txt"]
    assert git(repo.origin, "log", "-1", "--format=%cn", "roadmap-1-1-1").strip() == "cfg-bot"


def test_a_stage_the_config_gives_no_deadline_gets_the_run_settings_default(
    repo, make_agent, run_odw, tmp_path
) -> None:
    """On Actions as in local mode: one default deadline, `stageDeadlines`'."""
    agent = make_agent("good", f"print({MARKER!r})\n")
    config = tmp_path / "odw.yml"
    config.write_text(f"agent: {agent}\nconfig:\n  stageDeadlines: {{plan: 7}}\n")
    out = tmp_path / "o" / "verdict.json"
    proc = run_odw(
        "stage",
        "--stage",
        "design-review",
        "--task",
        "1.1.1",
        "--token",
        TOKEN,
        "--workdir",
        str(repo.clone),
        "--config",
        str(config),
        "--out",
        str(out),
        "--quiet",
        env={**os.environ},
    )
    assert json.loads(out.read_text())["deadline"] == RunConfig().deadline("design-review"), (
        proc.stderr
    )


def test_bad_config_is_a_usage_error(repo, run_odw, tmp_path: Path) -> None:
    config = tmp_path / "odw.yml"
    config.write_text("agent: x\nconfig:\n  maxParallel: 0\n")
    proc = run_odw(
        "stage",
        "--stage",
        "review",
        "--task",
        "1.1.1",
        "--token",
        TOKEN,
        "--workdir",
        str(repo.clone),
        "--config",
        str(config),
    )
    assert proc.returncode == 2
    assert "config.maxParallel" in proc.stderr
