"""Each port against the fake GitHub, asserted on what the fake holds."""

from __future__ import annotations

import pytest

from app.github import HeadMoved, NotMergeable, Unprocessable
from app.github.client import RepositoryClient
from app.github.protocols import CheckAction, CheckRunFields
from tests.fakegithub import FakeGitHub
from tests.fakegithub.state import Repository

MARKER = "<!-- odw:status v1 task=1.1 -->"


def _branch(repo: Repository, name: str, files: dict[str, str]) -> str:
    base = repo.git.sha("refs/heads/main")
    return repo.git.commit_files(name, files, f"work on {name}", parent=base)


def test_contents_are_read_at_a_pinned_sha_not_the_moving_branch(
    client: RepositoryClient, repo: Repository
) -> None:
    pinned = repo.git.sha("refs/heads/main")
    assert pinned
    repo.git.commit_files("main", {"docs/roadmap.md": "# Moved on\n"}, "edit", parent=pinned)
    assert (
        client.contents.file_at("docs/roadmap.md", pinned) == b"# Roadmap\n\n- [ ] 1.1 First task\n"
    )
    assert client.contents.file_at(".github/odw.yml", pinned) is None
    assert client.contents.branch_sha("main") == repo.git.sha("refs/heads/main") != pinned
    assert client.contents.branch_sha("nope") is None


def test_branches_are_created_and_moved_only_forward_unless_forced(
    client: RepositoryClient, repo: Repository
) -> None:
    base = repo.git.sha("refs/heads/main")
    assert base
    client.refs.create_branch("roadmap-1-1", base)
    ahead = repo.git.commit_files("roadmap-1-1", {"a": "1"}, "a", parent=base)
    client.refs.move_branch("roadmap-1-1", base, force=True)
    assert repo.git.sha("refs/heads/roadmap-1-1") == base
    client.refs.move_branch("roadmap-1-1", ahead)
    assert repo.git.sha("refs/heads/roadmap-1-1") == ahead


def test_a_check_run_is_created_with_buttons_then_concluded_in_place(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    sha = repo.git.sha("refs/heads/main")
    assert sha
    created = client.checks.create_check_run(
        "ODW · 1.1",
        sha,
        CheckRunFields(
            status="in_progress",
            title="implement running (attempt 1 of 2)",
            summary="**1.1** First task",
            external_id="run=7;task=1.1;attempt=1",
            actions=[CheckAction("Retry", "Run the stage again", "retry")],
        ),
    )
    done = client.checks.update_check_run(
        created.id,
        CheckRunFields(conclusion="failure", title="failed at gates", summary="x" * 70_000),
    )
    held = fake.check_runs[created.id]
    assert (held.status, held.conclusion, held.updates) == ("completed", "failure", 1)
    assert held.actions == [
        {"label": "Retry", "description": "Run the stage again", "identifier": "retry"}
    ]
    summary = held.output["summary"]
    assert 65_535 - 12 < len(summary.encode()) <= 65_535  # GitHub counts bytes
    left_out = 70_000 - summary.index("\n\n… (cut by ODW")
    assert summary.endswith(
        f"(cut by ODW: {left_out:,} of 70,000 characters left out; "
        "GitHub takes at most 65,535 bytes here)"
    )
    assert done.conclusion == "failure"
    assert [r.id for r in client.checks.check_runs_for_ref(sha, "ODW · 1.1")] == [created.id]
    assert client.checks.check_runs_for_ref(sha, "ODW · other") == []


def test_polling_check_runs_sends_if_none_match_and_reuses_the_answer(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    sha = repo.git.sha("refs/heads/main")
    assert sha
    client.checks.create_check_run("ODW · run", sha, CheckRunFields(status="queued"))
    first = client.checks.check_runs_for_ref(sha)
    second = client.checks.check_runs_for_ref(sha)
    statuses = [r["status"] for r in fake.requests if r["path"].endswith("/check-runs")]
    assert statuses[-2:] == [200, 304]
    assert first == second


def test_one_status_comment_found_by_marker_and_author_and_edited_in_place(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    _branch(repo, "roadmap-1-1", {"x.txt": "x"})
    pull = client.pulls.create_pull("roadmap-1-1", "main", "1.1 First task", "body")
    fake.comment_as("mallory", REPO_NAME, pull.number, f"{MARKER}\nforged by a person")
    mine = client.comments.create_comment(pull.number, f"{MARKER}\nplan: running")
    found = client.comments.find_marked_comment(pull.number, MARKER, fake.bot_login)
    assert found is not None and found.id == mine.id
    client.comments.edit_comment(mine.id, f"{MARKER}\nplan: passed")
    ours = [c for c in fake.comments.values() if c.user == fake.bot_login]
    assert [(c.body.splitlines()[1], c.edits) for c in ours] == [("plan: passed", 1)]


def test_reactions_acknowledge_a_command_once(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    number = fake.open_issue(REPO_NAME)
    command = fake.comment_as("octo", REPO_NAME, number, "/odw run")
    client.reactions.react_to_comment(command.id, "eyes")
    client.reactions.react_to_comment(command.id, "eyes")
    client.reactions.react_to_comment(command.id, "rocket")
    assert fake.comments[command.id].reactions == [
        (fake.bot_login, "eyes"),
        (fake.bot_login, "rocket"),
    ]
    with pytest.raises(ValueError, match="unknown reaction"):
        client.reactions.react_to_comment(command.id, "party")


def test_collaborator_permission_names_the_role(client: RepositoryClient, fake: FakeGitHub) -> None:
    fake.add_collaborator(REPO_NAME, "maintainer", "maintain")
    fake.add_collaborator(REPO_NAME, "reader", "read")
    assert client.permissions.permission_of("maintainer").permission == "write"
    assert client.permissions.permission_of("maintainer").role_name == "maintain"
    assert client.permissions.permission_of("reader").permission == "read"


def test_a_draft_pull_request_is_found_again_updated_and_squash_merged_at_its_sha(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    head = _branch(repo, "roadmap-1-1", {"feature.txt": "done\n"})
    pull = client.pulls.create_pull("roadmap-1-1", "main", "1.1 First task", "the task")
    assert pull.draft and pull.head_sha == head
    assert client.pulls.find_pull("roadmap-1-1", "main") == pull
    assert client.pulls.find_pull("roadmap-9", "main") is None
    client.pulls.update_pull(pull.number, body="the task, ExecPlan committed")
    with pytest.raises(NotMergeable):
        client.pulls.merge_pull(pull.number, head)
    fake.pulls[(REPO_NAME, pull.number)].draft = False
    with pytest.raises(HeadMoved):
        client.pulls.merge_pull(pull.number, repo.git.sha("refs/heads/main") or "")
    result = client.pulls.merge_pull(pull.number, head, title="1.1 First task (#1)")
    main = repo.git.sha("refs/heads/main")
    assert result.merged and result.sha == main
    assert repo.git.git("log", "-1", "--format=%s", "main") == "1.1 First task (#1)"
    assert repo.git.show(main or "", "feature.txt") == b"done\n"
    assert client.pulls.get_pull(pull.number).merged


REPO_NAME = "octo/demo"


@pytest.mark.parametrize(
    "actions",
    [
        [CheckAction("R", "r", f"a{n}") for n in range(4)],
        [CheckAction("A label longer than 20", "r", "retry")],
        [CheckAction("Retry", "d" * 41, "retry")],
    ],
    ids=["four-buttons", "long-label", "long-description"],
)
def test_check_run_buttons_outside_githubs_limits_are_refused_before_sending(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository, actions: list[CheckAction]
) -> None:
    sha = repo.git.sha("refs/heads/main") or ""
    with pytest.raises(ValueError, match="at most"):
        client.checks.create_check_run("ODW · 1.1", sha, CheckRunFields(actions=actions))
    assert fake.check_runs == {}


def test_creating_a_branch_that_already_points_there_is_done_and_elsewhere_is_refused(
    client: RepositoryClient, repo: Repository
) -> None:
    base = repo.git.sha("refs/heads/main") or ""
    client.refs.create_branch("roadmap-1-1", base)
    client.refs.create_branch("roadmap-1-1", base)  # after a crash: nothing to do
    other = repo.git.commit_files("scratch", {"s": "1"}, "s", parent=base)
    with pytest.raises(Unprocessable, match="already exists"):
        client.refs.create_branch("roadmap-1-1", other)
    assert repo.git.sha("refs/heads/roadmap-1-1") == base


def test_a_pull_request_whose_head_is_forced_back_onto_its_base_is_closed_by_github(
    fake: FakeGitHub, client: RepositoryClient, repo: Repository
) -> None:
    """GitHub closes (for good) a pull request left with no commits ahead of its
    base; one still ahead after a forced move stays open."""
    base = repo.git.sha("refs/heads/main")
    assert base
    _branch(repo, "roadmap-1-1", {"work/a.txt": "a"})
    pull = client.pulls.create_pull("roadmap-1-1", "main", "1.1 First task", "body")
    other = repo.git.commit_files("scratch", {"work/b.txt": "b"}, "b", parent=base)
    client.refs.move_branch("roadmap-1-1", other, force=True)  # still one commit ahead
    assert fake.pulls[(REPO_NAME, pull.number)].state == "open"
    client.refs.move_branch("roadmap-1-1", base, force=True)
    assert fake.pulls[(REPO_NAME, pull.number)].state == "closed"
