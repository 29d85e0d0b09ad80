"""`odw stage` with fake agents: the verdict a maintainer and the App rely on."""

from __future__ import annotations

import json
import time
from pathlib import Path

import jsonschema
import pytest

from app.core.execplan import REQUIRED_SECTIONS
from app.core.verdict import EXIT_TIMEOUT, Verdict, completion_marker
from tests.actions.conftest import alive, group_members
from tests.support import git

TOKEN = "tok-current-1"
MARKER = completion_marker(TOKEN)


def checks(result) -> dict[str, tuple[str, int | None]]:
    return {c.name: (c.status, c.code) for c in result.verdict.checks}


def test_marker_passes_commits_under_machine_identity_and_pushes(repo, make_agent, stage) -> None:
    agent = make_agent(
        "good",
        f"""
        import pathlib, sys
        sys.stdin.read()
        pathlib.Path("hello.py").write_text("def hello():\\n    return 'hi'\\n")
        print("working", flush=True)
        print({MARKER!r})
        """,
    )
    before = git(repo.clone, "rev-parse", "HEAD").strip()
    result = stage(repo.clone, agent, "--identity-name", "odw-bot", "--identity-email", "bot@x.org")
    assert result.code == 0, result.stderr
    v = result.verdict
    assert v.passed and v.fault is None
    assert checks(result)["completion_marker"] == ("passed", None)
    assert checks(result)["exit_code"] == ("skipped", 0)
    assert checks(result)["commit"][0] == "passed"
    assert checks(result)["push"][0] == "passed"
    assert v.branch == "roadmap-1-1-1"
    assert v.head_before == before
    assert v.head_after != before and v.commits == [v.head_after]
    assert v.dirty is False
    assert repo.origin_head("roadmap-1-1-1") == v.head_after
    who = git(repo.origin, "log", "-1", "--format=%an <%ae>|%cn <%ce>", "roadmap-1-1-1").strip()
    assert who == "odw-bot <bot@x.org>|odw-bot <bot@x.org>"
    assert "working" in v.output_tail
    # The runner pushes the task branch and nothing else.
    assert git(repo.origin, "for-each-ref", "--format=%(refname)").strip() == (
        "refs/heads/main\nrefs/heads/roadmap-1-1-1"
    )


def test_verdict_file_matches_the_published_schema(repo, make_agent, stage) -> None:
    agent = make_agent("good", f"print({MARKER!r})\n")
    result = stage(repo.clone, agent, stage="review")
    schema = Verdict.model_json_schema(by_alias=True)
    jsonschema.validate(result.data, schema)
    for key in (
        "stage",
        "task",
        "token",
        "passed",
        "checks",
        "gates",
        "branch",
        "headBefore",
        "headAfter",
        "commits",
        "dirty",
        "salvage",
        "timings",
        "outputTail",
    ):
        assert key in result.data


def test_clean_exit_without_marker_fails_with_exit_check_passed(repo, make_agent, stage) -> None:
    agent = make_agent("polite", "print('all done, honest')\n")
    result = stage(repo.clone, agent)
    assert result.code == 1
    assert not result.verdict.passed
    assert checks(result)["completion_marker"] == ("failed", None)
    assert checks(result)["exit_code"] == ("passed", 0)
    assert "exited before" in result.verdict.check("completion_marker").reason
    assert result.verdict.fault is None  # a product failure, not an infra fault
    assert repo.origin_head("roadmap-1-1-1") is None  # nothing pushed


def test_nonzero_exit_is_a_product_failure_not_a_fault(repo, make_agent, stage) -> None:
    agent = make_agent("three", "import sys\nprint('boom')\nsys.exit(3)\n")
    result = stage(repo.clone, agent)
    assert result.code == 1
    assert checks(result)["exit_code"] == ("failed", 3)
    assert result.verdict.exit_code == 3
    assert result.verdict.fault is None  # the agent exited by itself: failed, not retried


def test_hang_past_deadline_kills_the_tree_including_a_child_ignoring_sigterm(
    repo, make_agent, stage, tmp_path
) -> None:
    pids = tmp_path / "pids.json"
    agent = make_agent(
        "hang",
        f"""
        import json, os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c",
            "import signal, time\\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\\n"
            "print('child up', flush=True)\\ntime.sleep(600)"])
        # A grandchild in its own session, out of the process group.
        loner = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"],
                                 start_new_session=True)
        open({str(pids)!r}, "w").write(json.dumps(
            {{"me": os.getpid(), "child": child.pid, "loner": loner.pid, "pgid": os.getpgid(0)}}))
        print("hanging", flush=True)
        time.sleep(600)
        """,
    )
    start = time.monotonic()
    result = stage(repo.clone, agent, deadline=1.5, grace=0.5)
    elapsed = time.monotonic() - start
    assert result.code == 1
    v = result.verdict
    assert v.exit_code == EXIT_TIMEOUT
    assert checks(result)["exit_code"] == ("failed", EXIT_TIMEOUT)
    assert "deadline of 1.5s expired" in v.check("exit_code").reason
    assert "SIGTERM then SIGKILL" in v.check("exit_code").reason
    assert v.fault == "timeout"
    assert v.deadline == 1.5
    info = json.loads(pids.read_text())
    for name in ("me", "child", "loner"):
        assert not alive(info[name]), f"{name} survived"
    assert group_members(info["pgid"]) == []
    assert elapsed < 30


def test_old_tokens_marker_is_not_accepted(repo, make_agent, stage) -> None:
    old = completion_marker("tok-previous-0")
    agent = make_agent("stale", f"print({old!r})\n")
    result = stage(repo.clone, agent)
    assert result.code == 1
    assert checks(result)["completion_marker"] == ("failed", None)
    assert "tok-previous-0" in result.verdict.check("completion_marker").reason


def test_longer_token_sharing_the_prefix_is_not_accepted(repo, make_agent, stage) -> None:
    agent = make_agent("prefix", f"print({MARKER + 'X'!r})\n")
    assert stage(repo.clone, agent).code == 1


def test_marker_split_across_writes_and_wrapped_in_colour_passes(repo, make_agent, stage) -> None:
    head, tail = MARKER[:7], MARKER[7:]
    agent = make_agent(
        "split",
        f"""
        import sys, time
        out = sys.stdout.buffer
        for part in [b"noise\\n  ", {head.encode()!r}, b"\\x1b[1;3", b"2m", {tail[:5].encode()!r},
                     b"\\x1b]8;;http://x\\x1b", b"\\\\", {tail[5:].encode()!r}, b"\\x1b[0m\\n"]:
            out.write(part)
            out.flush()
            time.sleep(0.02)
        """,
    )
    result = stage(repo.clone, agent, stage="design-review")
    assert checks(result)["completion_marker"] == ("passed", None)


def test_fifty_megabytes_of_output_keeps_a_bounded_log(repo, make_agent, stage) -> None:
    agent = make_agent(
        "loud",
        f"""
        import sys
        line = b"x" * 1023 + b"\\n"
        for _ in range(50 * 1024):
            sys.stdout.buffer.write(line)
        sys.stdout.buffer.write(b"last words\\n" + {MARKER.encode()!r} + b"\\n")
        """,
    )
    result = stage(repo.clone, agent, stage="review", deadline=30)
    v = result.verdict
    assert checks(result)["completion_marker"] == ("passed", None)
    assert v.output_bytes == 50 * 1024 * 1024 + len("last words\n") + len(MARKER) + 1
    log = (result.out_dir / "agent.log").read_bytes()
    assert len(log) < 2 * (1 << 20) + 200
    assert b"bytes elided by ODW" in log
    assert log.endswith(MARKER.encode() + b"\n")
    assert v.output_tail.endswith("last words\n" + MARKER + "\n")
    assert len(v.output_tail) <= 8000


def test_agent_echoing_its_prompt_does_not_pass(repo, make_agent, stage) -> None:
    agent = make_agent("parrot", "import sys\nsys.stdout.write(sys.stdin.read())\n")
    result = stage(repo.clone, agent, stage="review")
    assert checks(result)["completion_marker"][0] == "failed"
    assert (
        "followed by one space and ODW_COMPLETION_TOKEN, the token `tok-current-1`"
        in result.verdict.output_tail
    )


def test_agent_contract_environment_cwd_and_stdin(repo, make_agent, stage, tmp_path) -> None:
    seen = tmp_path / "seen.json"
    agent = make_agent(
        "probe",
        f"""
        import json, os, sys
        env = {{k: v for k, v in os.environ.items() if k.startswith("ODW_")}}
        prompt = sys.stdin.read()
        json.dump({{"env": env, "cwd": os.getcwd(), "prompt": prompt,
                   "file": open(env["ODW_PROMPT_FILE"]).read()}}, open({str(seen)!r}, "w"))
        print(env["ODW_COMPLETION_WORD"], env["ODW_COMPLETION_TOKEN"])
        """,
    )
    result = stage(repo.clone, agent, stage="plan")
    data = json.loads(seen.read_text())
    env = data["env"]
    assert env["ODW_STAGE"] == "plan"
    assert env["ODW_TASK_ID"] == "1.1.1"
    assert env["ODW_COMPLETION_WORD"] + " " + env["ODW_COMPLETION_TOKEN"] == MARKER
    assert all(MARKER not in value for value in env.values())
    assert env["ODW_EXECPLAN_PATH"] == "docs/execplans/1-1-1.md"
    assert Path(env["ODW_REPORT_FILE"]).parent == result.out_dir
    assert Path(data["cwd"]).resolve() == repo.clone.resolve()
    assert data["prompt"] == data["file"]
    assert "1.1.1. Add a greeting module" in data["prompt"]
    # The plan stage must leave an ExecPlan; this agent wrote none.
    assert checks(result)["execplan"] == ("failed", None)
    assert result.code == 1


PLAN_BODY = "".join(f"## {name}\n\nText.\n\n" for name in REQUIRED_SECTIONS)


def planner(make_agent, status: str, body: str = PLAN_BODY):
    return make_agent(
        "planner",
        f"""
        import os, pathlib
        p = pathlib.Path(os.environ["ODW_EXECPLAN_PATH"])
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("# Plan\\n\\nStatus: {status}\\n\\n" + {body!r})
        print(os.environ["ODW_COMPLETION_WORD"], os.environ["ODW_COMPLETION_TOKEN"])
        """,
    )


def test_plan_stage_commits_the_execplan(repo, make_agent, stage) -> None:
    result = stage(repo.clone, planner(make_agent, "DRAFT"), stage="plan")
    assert result.code == 0, result.verdict.checks
    assert checks(result)["execplan"] == ("passed", None)
    assert checks(result)["execplan_contract"] == ("passed", None)
    shown = git(repo.origin, "show", "roadmap-1-1-1:docs/execplans/1-1-1.md")
    assert "Status: DRAFT" in shown


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [
        ("COMPLETE", PLAN_BODY, "Status is COMPLETE; the plan stage writes DRAFT"),
        ("APPROVED", PLAN_BODY, "Status is APPROVED; the plan stage writes DRAFT"),
        ("DRAFT", PLAN_BODY.replace("## Risks", "Risks"), "missing sections: Risks"),
    ],
    ids=["complete", "approved", "missing-section"],
)
def test_plan_stage_fails_a_plan_that_breaks_the_contract(
    repo, make_agent, stage, status, body, reason
) -> None:
    """Issue 12.11: a plan's Status decides where `continue` resumes; only DRAFT may leave plan."""
    result = stage(repo.clone, planner(make_agent, status, body), stage="plan")
    assert result.code == 1 and not result.verdict.passed
    check = result.verdict.check("execplan_contract")
    assert check is not None and check.status == "failed"
    assert reason in check.reason
    # Not pushed: a COMPLETE plan on origin would send a resumed task straight to review.
    assert repo.origin_head("roadmap-1-1-1") is None
    assert checks(result)["push"][0] == "skipped"


def test_marker_then_nonzero_exit_passes_with_exit_code_recorded(repo, make_agent, stage) -> None:
    agent = make_agent("marker-then-3", f"import sys\nprint({MARKER!r})\nsys.exit(3)\n")
    result = stage(repo.clone, agent, stage="design-review", env={})
    assert checks(result)["completion_marker"] == ("passed", None)
    assert checks(result)["exit_code"] == ("skipped", 3)
    assert "not consulted" in result.verdict.check("exit_code").reason


def test_an_environment_dump_does_not_pass_a_stage(repo, stage) -> None:
    """Issue 11.1: half-done work plus `env` and a failing exit is not a completed stage."""
    result = stage(repo.clone, "echo x > partial.txt; env; exit 3")
    v = result.verdict
    assert result.code == 1 and not v.passed
    assert checks(result)["completion_marker"][0] == "failed"
    assert checks(result)["exit_code"] == ("failed", 3)
    assert repo.origin_head("roadmap-1-1-1") is None
    assert v.commits == [] and v.dirty
    # No variable holds the whole marker, so no dump of the environment prints it.
    assert MARKER not in (result.out_dir / "agent.log").read_text()
