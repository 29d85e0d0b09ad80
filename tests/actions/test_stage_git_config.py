"""The agent may write `.git/config`; the runner's git calls after it do not obey it.

Each test plants one configuration an attacker would, lets the agent exit
successfully, and checks what the runner's commit, evidence and push did.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from app.core.verdict import completion_marker
from tests.gitops.http_origin import GitHttpServer, redirecting_to
from tests.support import git

TOKEN = "tok-current-1"
MARKER = completion_marker(TOKEN)
AGENT_GIT = "['git', '-c', 'user.name=agent', '-c', 'user.email=agent@example.com']"


def checks(result) -> dict[str, str]:
    return {c.name: c.status for c in result.verdict.checks}


def reasons(result) -> dict[str, str]:
    return {c.name: c.reason for c in result.verdict.checks}


def refs(bare: Path) -> list[str]:
    return git(bare, "for-each-ref", "--format=%(refname)").split()


def test_push_follow_tags_set_by_the_agent_does_not_push_its_tag(repo, make_agent, stage) -> None:
    agent = make_agent(
        "tagger",
        f"""
        import pathlib, subprocess
        g = {AGENT_GIT}
        pathlib.Path("greeting.py").write_text("def hello():\\n    return 'hi'\\n")
        subprocess.run(g + ["add", "greeting.py"], check=True)
        subprocess.run(g + ["commit", "-qm", "greeting"], check=True)
        subprocess.run(g + ["tag", "-a", "main-hijack", "-m", "mine"], check=True)
        subprocess.run(["git", "config", "push.followTags", "true"], check=True)
        print("{MARKER}")
        """,
    )
    result = stage(repo.clone, agent)
    assert result.verdict.passed, result.verdict.checks
    assert repo.origin_head("roadmap-1-1-1") == git(repo.clone, "rev-parse", "HEAD").strip()
    assert "refs/tags/main-hijack" not in refs(repo.origin)
    assert refs(repo.origin) == ["refs/heads/main", "refs/heads/roadmap-1-1-1"]


def test_push_insteadof_written_by_the_agent_is_refused_not_pushed_elsewhere(
    repo, make_agent, stage, tmp_path
) -> None:
    evil = tmp_path / "evil.git"
    git(tmp_path, "init", "-q", "--bare", str(evil))
    agent = make_agent(
        "redirector",
        f"""
        import pathlib, subprocess
        pathlib.Path("greeting.py").write_text("x = 1\\n")
        subprocess.run(["git", "config", "url.{evil}.pushInsteadOf", "{repo.origin}"], check=True)
        print("{MARKER}")
        """,
    )
    result = stage(repo.clone, agent)
    assert not result.verdict.passed
    assert checks(result)["git_config"] == "failed"
    assert f"url.{evil}.pushinsteadof" in reasons(result)["git_config"]
    assert "push" not in checks(result)
    assert refs(evil) == []
    assert repo.origin_head("roadmap-1-1-1") is None


def test_a_push_that_does_not_reach_the_url_read_before_the_agent_is_not_reported_pushed(
    repo, make_agent, stage, tmp_path
) -> None:
    """A redirect configured by the checkout's owner is kept, but verified on the remote."""
    elsewhere = tmp_path / "elsewhere.git"
    git(tmp_path, "init", "-q", "--bare", str(elsewhere))
    git(repo.clone, "config", f"url.{elsewhere}.pushInsteadOf", str(repo.origin))
    agent = make_agent(
        "worker", f'import pathlib; pathlib.Path("a.py").write_text("a\\n"); print("{MARKER}")'
    )
    result = stage(repo.clone, agent)
    assert not result.verdict.passed
    assert checks(result)["push"] == "failed"
    assert result.verdict.fault == "push-failed"
    assert "shows no refs/heads/roadmap-1-1-1" in reasons(result)["push"]
    assert repo.origin_head("roadmap-1-1-1") is None


def test_core_fsmonitor_written_by_the_agent_never_runs_in_runner_git(
    repo, make_agent, stage, tmp_path
) -> None:
    ran = tmp_path / "fsmonitor-ran"
    script = tmp_path / "monitor.sh"
    script.write_text(f"#!/bin/sh\necho run >> {ran}\n")
    script.chmod(0o755)
    agent = make_agent(
        "monitor",
        f"""
        import pathlib, subprocess
        pathlib.Path("greeting.py").write_text("x = 1\\n")
        subprocess.run(["git", "config", "core.fsmonitor", "{script}"], check=True)
        print("{MARKER}")
        """,
    )
    result = stage(repo.clone, agent)
    # Refused, so a gate's own git never meets it either; and the runner's calls
    # (reading the evidence included) ran with it switched off.
    assert checks(result)["git_config"] == "failed"
    assert "core.fsmonitor" in reasons(result)["git_config"]
    assert not ran.exists(), ran.read_text()
    assert repo.origin_head("roadmap-1-1-1") is None


def test_a_clean_filter_written_by_the_agent_never_runs(repo, make_agent, stage, tmp_path) -> None:
    ran = tmp_path / "filter-ran"
    agent = make_agent(
        "filterer",
        f"""
        import pathlib, subprocess
        pathlib.Path(".gitattributes").write_text("*.py filter=evil\\n")
        pathlib.Path("greeting.py").write_text("x = 1\\n")
        subprocess.run(["git", "config", "filter.evil.clean", "touch {ran}; cat"], check=True)
        print("{MARKER}")
        """,
    )
    result = stage(repo.clone, agent)
    assert checks(result)["git_config"] == "failed"
    assert "filter.evil.clean" in reasons(result)["git_config"]
    assert not ran.exists()
    assert repo.origin_head("roadmap-1-1-1") is None


def test_the_push_token_reaches_only_the_runners_push(repo, make_agent, stage, tmp_path) -> None:
    """The agent finds no token (file, environment, git config) and cannot push itself."""
    token = "ghs_" + secrets.token_hex(16)
    token_file = tmp_path / "push-token"
    token_file.write_text(token)
    seen = tmp_path / "agent-saw"
    agent = make_agent(
        "looker",
        f"""
        import os, pathlib, subprocess
        found = []
        if pathlib.Path("{token_file}").exists():
            found.append("file")
        if any("{token}" in v for v in os.environ.values()):
            found.append("environment")
        if "{token}" in pathlib.Path(".git/config").read_text():
            found.append("git config")
        pushed = subprocess.run(["git", "push", "-q", "origin", "HEAD:refs/heads/agent-push"],
                                capture_output=True).returncode == 0
        if pushed:
            found.append("pushed")
        pathlib.Path("{seen}").write_text(",".join(found))
        pathlib.Path("greeting.py").write_text("x = 1\\n")
        print("{MARKER}")
        """,
    )
    with GitHttpServer(repo.origin.parent, "x-access-token", token) as server:
        git(repo.clone, "remote", "set-url", "origin", f"{server.url}/{repo.origin.name}")
        result = stage(
            repo.clone,
            agent,
            "--push-token-file",
            str(token_file),
            env={"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "/bin/false"},
        )
        authorised = [path for _, path, ok in server.requests if ok]
    assert result.verdict.passed, result.verdict.checks
    assert seen.read_text() == ""
    assert not token_file.exists()
    assert repo.origin_head("roadmap-1-1-1") == git(repo.clone, "rev-parse", "HEAD").strip()
    assert repo.origin_head("agent-push") is None
    assert any("receive-pack" in path for path in authorised)
    assert token not in result.stdout + result.stderr
    assert token not in (result.out_dir / "verdict.json").read_text()


def test_gates_and_evidence_see_no_agent_hooks(repo, make_agent, stage, tmp_path) -> None:
    """A hook planted in .git/hooks never runs in the runner's commit or push."""
    ran = tmp_path / "hook-ran"
    agent = make_agent(
        "hooker",
        f"""
        import os, pathlib
        hooks = pathlib.Path(".git/hooks")
        for name in ("pre-commit", "commit-msg", "pre-push", "post-commit"):
            (hooks / name).write_text("#!/bin/sh\\necho {{name}} >> {ran}\\n".format(name=name))
            os.chmod(hooks / name, 0o755)
        pathlib.Path("greeting.py").write_text("x = 1\\n")
        print("{MARKER}")
        """,
    )
    result = stage(repo.clone, agent)
    assert result.verdict.passed, result.verdict.checks
    assert repo.origin_head("roadmap-1-1-1") is not None
    assert not ran.exists()


def test_a_malformed_commit_identity_is_a_one_line_usage_error(repo, make_agent, stage) -> None:
    agent = make_agent("never", f'print("{MARKER}")')
    result = stage(repo.clone, agent, "--identity-email", "not an address")
    assert result.code == 2
    assert result.verdict is None
    (line,) = result.stderr.strip().splitlines()
    assert "--identity-email" in line and "email:" in line


def test_the_runners_push_does_not_follow_a_redirect_with_the_token(
    repo, make_agent, stage, tmp_path
) -> None:
    token = "ghs_" + secrets.token_hex(16)
    token_file = tmp_path / "push-token"
    token_file.write_text(token)
    agent = make_agent(
        "worker", f'import pathlib; pathlib.Path("a.py").write_text("a\\n"); print("{MARKER}")'
    )
    with (
        GitHttpServer(repo.origin.parent, "x-access-token", token) as elsewhere,
        redirecting_to(elsewhere.url) as front,
    ):
        git(repo.clone, "remote", "set-url", "origin", f"{front}/{repo.origin.name}")
        result = stage(repo.clone, agent, "--push-token-file", str(token_file))
        authorised = [path for _, path, ok in elsewhere.requests if ok]
    assert checks(result)["push"] == "failed"
    assert "redirect" in reasons(result)["push"]
    assert authorised == []
    assert repo.origin_head("roadmap-1-1-1") is None
