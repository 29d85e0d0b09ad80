"""The git runner: deadlines that kill the whole process group, redaction, no stored creds."""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path

import pytest

from app.core.identity import Identity
from app.gitops.auth import CredentialsInUrl, askpass_script, auth_env, check_url
from app.gitops.runner import GitError, GitRunner, GitTimeout, config_entries, git, risky_config


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def test_a_call_past_its_deadline_is_killed_with_its_children(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    runner = GitRunner(timeout=0.5)
    start = time.monotonic()
    with pytest.raises(GitTimeout) as info:
        runner.run("-c", f"alias.hang=!echo $$ > {pidfile}; exec sleep 30", "hang", cwd=tmp_path)
    assert time.monotonic() - start < 20  # killed at 0.5 s, not after the 30 s sleep
    assert info.value.returncode == 124
    assert "timed out after 0.5 s" in str(info.value)
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid), "the grandchild survived the deadline"


def test_failures_raise_with_the_secret_redacted(tmp_path: Path) -> None:
    runner = GitRunner(secrets=["tok-abc123"])
    runner.run("init", "--quiet", str(tmp_path / "r"))
    with pytest.raises(GitError) as info:
        runner.run("rev-parse", "--verify", "tok-abc123", cwd=tmp_path / "r")
    assert "tok-abc123" not in str(info.value)
    assert "***" in str(info.value)
    result = runner.run("rev-parse", "--verify", "tok-abc123", cwd=tmp_path / "r", check=False)
    assert result.returncode != 0
    assert "tok-abc123" not in result.stderr + " ".join(result.args)


def test_configured_credential_helpers_are_never_consulted(tmp_path: Path) -> None:
    """A user's `credential.helper=store` must never receive (and write down) our token."""
    repo = tmp_path / "r"
    record = tmp_path / "helper-was-called"
    runner = GitRunner(env={"GIT_ASKPASS": "/bin/false"})
    runner.run("init", "--quiet", str(repo))
    runner.run("config", "credential.helper", f'!f() {{ echo "$1" >> {record}; }}; f', cwd=repo)
    creds = "protocol=https\nhost=example.invalid\nusername=u\npassword=tok-abc\n\n"
    runner.run("credential", "approve", cwd=repo, input=creds)
    ask = "protocol=https\nhost=example.invalid\n\n"
    got = runner.run("credential", "fill", cwd=repo, check=False, input=ask, timeout=10)
    assert not record.exists(), record.read_text()
    assert got.returncode != 0  # no helper answered and askpass refused: no prompt, no hang
    # the same helper does run for plain git, so the check above is not vacuous
    import subprocess

    subprocess.run(
        ["git", "credential", "approve"], cwd=repo, input=creds, text=True, timeout=10,
        check=True, capture_output=True,
    )  # fmt: skip
    assert record.read_text().split() == ["store"]


def test_nonpositive_timeout_is_refused() -> None:
    with pytest.raises(ValueError):
        GitRunner(timeout=0)


@pytest.mark.parametrize(
    "url",
    [
        "https://x-access-token:ghs_abc@github.com/o/r.git",
        "https://user@github.com/o/r.git",
        "http://a:b@127.0.0.1:8080/r.git",
    ],
    ids=["token", "user", "http"],
)
def test_urls_with_credentials_are_refused(url: str) -> None:
    with pytest.raises(CredentialsInUrl, match="ODW_GIT_TOKEN"):
        check_url(url)


@pytest.mark.parametrize(
    "url",
    ["https://github.com/o/r.git", "/srv/git/r.git", "git@github.com:o/r.git"],
    ids=["https", "local-path", "scp-like-ssh"],
)
def test_plain_urls_pass(url: str) -> None:
    check_url(url)


def test_askpass_answers_from_the_environment_and_holds_no_secret(tmp_path: Path) -> None:
    env = auth_env(tmp_path, "tok-xyz789")
    script = Path(env["GIT_ASKPASS"])
    assert script == askpass_script(tmp_path)  # idempotent
    assert "tok-xyz789" not in script.read_text()
    assert os.stat(script).st_mode & 0o777 == 0o700
    import subprocess

    def ask(prompt: str) -> str:
        return subprocess.run(
            [str(script), prompt], env={**os.environ, **env}, capture_output=True, text=True,
            timeout=5, check=True,
        ).stdout.strip()  # fmt: skip

    assert ask("Username for 'https://github.com': ") == "x-access-token"
    assert ask("Password for 'https://x-access-token@github.com': ") == "tok-xyz789"


def test_the_plain_git_helper_is_the_same_runner(tmp_path: Path) -> None:
    """`git()` (local mode, evidence, the runner side) kills the group and names the deadline."""
    pidfile = tmp_path / "child.pid"
    with pytest.raises(GitTimeout) as info:
        git(tmp_path, "-c", f"alias.hang=!echo $$ > {pidfile}; exec sleep 30", "hang", timeout=0.4)
    assert "timed out after 0.4 s" in str(info.value)
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid)


def test_repository_config_cannot_run_programs_in_runner_calls(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    git(tmp_path, "init", "--quiet", str(repo))
    ran = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f'#!/bin/sh\necho "$0" >> {ran}\n')
    script.chmod(0o755)
    hooks = repo / ".git" / "hooks"
    (hooks / "pre-commit").write_text(f"#!/bin/sh\necho hook >> {ran}\n")
    (hooks / "pre-commit").chmod(0o755)
    for key, value in (("core.fsmonitor", str(script)), ("core.pager", str(script))):
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    (repo / "a.txt").write_text("a\n")
    git(repo, "status", "--porcelain")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "a", env=Identity(name="t", email="t@example.com").env())
    git(repo, "log", "-1")
    assert not ran.exists()


@pytest.mark.parametrize(
    ("key", "value", "risky"),
    [
        ("url.https://evil.example/.pushinsteadof", "https://github.com/", True),
        ("filter.x.clean", "sh -c evil", True),
        ("include.path", "/tmp/other", True),
        ("http.https://github.com/.extraheader", "X: y", True),
        ("core.fsmonitor", "./evil", True),
        ("branch.main.remote", "origin", False),
        ("user.name", "someone", False),
    ],
    ids=["push-insteadof", "clean-filter", "include", "url-http-header", "fsmonitor",
         "branch-tracking", "user-name"],
)  # fmt: skip
def test_risky_config_names_what_no_override_reaches(
    tmp_path: Path, key: str, value: str, risky: bool
) -> None:
    repo = tmp_path / "r"
    git(tmp_path, "init", "--quiet", str(repo))
    before = config_entries(repo)
    subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    after = config_entries(repo)
    assert risky_config(after, before) == ([key] if risky else [])
    # What was there before the agent ran is the owner's, not the agent's.
    assert risky_config(after, after) == []


def test_input_and_output_larger_than_a_pipe_are_exchanged_whole(tmp_path: Path) -> None:
    """Both directions at once: git reads all of a large input while writing its answer."""
    runner = GitRunner()
    runner.run("init", "--quiet", str(tmp_path / "r"))
    text = "".join(f"line {i}: é\n" for i in range(40_000))  # ~500 kB, beyond any pipe buffer
    data = text.encode()
    sha = runner.run("hash-object", "-w", "--stdin", cwd=tmp_path / "r", input=text).stdout
    blob = hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False)
    assert sha.strip() == blob.hexdigest()
    assert runner.run("cat-file", "-p", sha.strip(), cwd=tmp_path / "r").stdout == text


def test_output_reads_as_text_mode_did(tmp_path: Path) -> None:
    """UTF-8 with bad bytes replaced, and universal newlines, as `text=True` gave."""
    repo = tmp_path / "r"
    git(tmp_path, "init", "--quiet", str(repo))
    blob = repo / "blob"
    blob.write_bytes(b"a\r\nb\rc\xff\n")
    sha = git(repo, "hash-object", "-w", str(blob)).stdout.strip()
    assert git(repo, "cat-file", "-p", sha).stdout == "a\nb\nc\ufffd\n"


def test_a_child_that_closes_its_pipes_and_lingers_is_killed_at_the_deadline(
    tmp_path: Path,
) -> None:
    """The end of the output is not the exit: waiting for the exit keeps the deadline too."""
    pidfile = tmp_path / "child.pid"
    fake = tmp_path / "fake-git"
    fake.write_text(f"#!/bin/sh\necho $$ > {pidfile}\nexec >/dev/null 2>&1\nexec sleep 30\n")
    fake.chmod(0o755)
    start = time.monotonic()
    with pytest.raises(GitTimeout, match=r"timed out after 0\.5 s"):
        GitRunner(timeout=0.5, git=str(fake)).run("status", cwd=tmp_path)
    assert time.monotonic() - start < 20  # the deadline held, not the 30 s sleep
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid)


def test_the_environment_is_read_afresh_for_every_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each call sees `os.environ` as it is then, less the variables that could
    point git elsewhere, plus the runner's own and the call's own variables."""
    runner = GitRunner(env={"ODW_PROBE_RUNNER": "runner"})
    show = ["-c", "alias.show-env=!echo $ODW_PROBE/$ODW_PROBE_RUNNER/$ODW_PROBE_CALL/$GIT_DIR"]
    monkeypatch.setenv("ODW_PROBE", "first")
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    assert runner.run(*show, "show-env", cwd=tmp_path).stdout == "first/runner//\n"
    monkeypatch.setenv("ODW_PROBE", "second")
    call = runner.run(*show, "show-env", cwd=tmp_path, env={"ODW_PROBE_CALL": "call"})
    assert call.stdout == "second/runner/call/\n"


def test_started_calls_run_at_once_and_a_stopped_one_is_killed(tmp_path: Path) -> None:
    """`start` returns while git runs: the first call here finishes only once the second
    has started; `stop` kills a call whose answer is no longer wanted."""
    fake = tmp_path / "fake-git"
    fake.write_text(
        "#!/bin/sh\n"
        'case "$1" in\n'
        f"  wait) while [ ! -e {tmp_path}/second ]; do sleep 0.01; done; echo first ;;\n"
        f"  signal) : > {tmp_path}/second; echo second ;;\n"
        f"  hang) echo $$ > {tmp_path}/hang.pid; exec sleep 30 ;;\n"
        "esac\n"
    )
    fake.chmod(0o755)
    runner = GitRunner(timeout=20, git=str(fake))
    first = runner.start("wait", cwd=tmp_path)
    second = runner.start("signal", cwd=tmp_path)
    assert first.result().stdout == "first\n"
    assert second.result().stdout == "second\n"

    hung = runner.start("hang", cwd=tmp_path)
    deadline = time.monotonic() + 5
    while not (tmp_path / "hang.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    pid = int((tmp_path / "hang.pid").read_text())
    hung.stop()
    deadline = time.monotonic() + 5
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid)
