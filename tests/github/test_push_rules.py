"""The fake's git server refuses pushes as github.com does besides GH006: a
ruleset's GH013 and workflow files pushed without the `workflows` permission,
in GitHub's own words (sources in tests/fakegithub/push_rules.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.github.client import GitHubApp, RepositoryClient
from tests.fakegithub import FakeGitHub
from tests.fakegithub.state import Repository
from tests.github.conftest import REPO
from tests.github.test_git_http import _env, _git


def _clone_and_commit(
    fake: FakeGitHub, token: str, tmp_path: Path, files: dict[str, str]
) -> tuple[Path, dict[str, str]]:
    env = _env(tmp_path, token)
    work = tmp_path / "work"
    done = _git("clone", "-q", fake.git_url(REPO), str(work), cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    for name, text in files.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text)
    _git("add", "-A", cwd=work, env=env)
    _git("commit", "-qm", "change", cwd=work, env=env)
    return work, env


@pytest.mark.parametrize(
    ("rules", "lines"),
    [
        (("pull_request",), ["- Changes must be made through a pull request."]),
        (("update",), ["- Cannot update this protected ref."]),
        (
            ("update", "pull_request"),
            [
                "- Cannot update this protected ref.",
                "- Changes must be made through a pull request.",
            ],
        ),
    ],
    ids=["pull-request-rule", "restrict-updates-rule", "both-rules"],
)
def test_a_ruleset_refuses_a_push_with_gh013_and_each_rule(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository, tmp_path: Path,
    rules: tuple[str, ...], lines: list[str],
) -> None:  # fmt: skip
    fake.add_ruleset(REPO, "main", rules)
    main = repo.git.sha("refs/heads/main")
    work, env = _clone_and_commit(fake, client.git_token(write=True), tmp_path, {"x.txt": "x\n"})
    pushed = _git("push", "--porcelain", "origin", "HEAD:main", "HEAD:refs/heads/side", cwd=work,
                  env=env)  # fmt: skip
    assert pushed.returncode != 0
    assert (
        "!\tHEAD:refs/heads/main\t[remote rejected] "
        "(push declined due to repository rule violations)" in pushed.stdout
    )
    said = [ln.removeprefix("remote:").strip() for ln in pushed.stderr.splitlines()]
    assert "error: GH013: Repository rule violations found for refs/heads/main." in said
    assert (
        f"Review all repository rules at {fake.host_url}/{REPO}/rules?ref=refs%2Fheads%2Fmain"
        in said
    )
    assert [ln for ln in said if ln.startswith("- ")] == lines
    assert repo.git.sha("refs/heads/main") == main
    # Only the ruleset's branch is refused; the other ref of the same push lands.
    assert (
        repo.git.sha("refs/heads/side")
        == _git("rev-parse", "HEAD", cwd=work, env=env).stdout.strip()
    )


@pytest.mark.parametrize("granted", [False, True], ids=["without-workflows", "with-workflows"])
def test_an_app_token_without_workflows_cannot_push_a_workflow_change(
    app: GitHubApp, fake: FakeGitHub, repo: Repository, tmp_path: Path, granted: bool
) -> None:
    permissions = {"contents": "write", "metadata": "read"}
    if granted:
        permissions["workflows"] = "write"
    installation = fake.install("octo", [REPO], permissions)
    client = app.repository(installation.id, REPO)
    token = client._transport(permissions)._token() if granted else client.git_token(write=True)
    changed = {".github/workflows/ci.yml": "on: push\n", "src/a.txt": "a\n"}
    work, env = _clone_and_commit(fake, token, tmp_path, changed)
    pushed = _git("push", "--porcelain", "origin", "HEAD:refs/heads/roadmap-1-1", cwd=work, env=env)
    if granted:
        assert pushed.returncode == 0, pushed.stderr
        assert repo.git.sha("refs/heads/roadmap-1-1")
        return
    assert pushed.returncode != 0
    assert (
        "!\tHEAD:refs/heads/roadmap-1-1\t[remote rejected] (refusing to allow a GitHub App to "
        "create or update workflow `.github/workflows/ci.yml` without `workflows` permission)"
    ) in pushed.stdout
    assert repo.git.sha("refs/heads/roadmap-1-1") is None
    # A push that leaves the workflows alone goes through with the same token.
    (work / "src/a.txt").write_text("b\n")
    _git("rm", "-q", "--cached", ".github/workflows/ci.yml", cwd=work, env=env)
    _git("commit", "-q", "--amend", "-am", "no workflow", cwd=work, env=env)
    again = _git("push", "--porcelain", "origin", "HEAD:refs/heads/roadmap-1-1", cwd=work, env=env)
    assert again.returncode == 0, again.stderr
