"""GitHub's size limits, end to end over HTTP: the fake refuses an over-long
comment, pull request body or check run output with 422 as GitHub does (each
counted as GitHub counts it: `tests/fakegithub/limits.py` cites where), and
every ODW writer fits (`app/core/github_limits.py`), cut on bytes at a
character boundary with a note saying how much was left out."""

from __future__ import annotations

import re
from typing import Any

import pytest

from app.core.github_limits import BODY_LIMIT, CHECK_OUTPUT_LIMIT, fit
from app.github import Unprocessable
from app.github.client import RepositoryClient
from app.github.protocols import CheckRunFields
from app.github.transport import Transport
from tests.fakegithub import FakeGitHub
from tests.fakegithub.state import Repository

REPO = "octo/demo"
NOTE = "cut by ODW"
# The 90,388-character reply a stranger once produced, with multi-byte text.
LONG = "é @x " * 18_078
RAINBOW = "\N{RAINBOW}"  # four bytes in UTF-8
# "… (cut by ODW: 12,345 of 70,000 characters left out; GitHub takes at most 65,535 bytes here)"
HOW_MUCH = re.compile(
    r"… \(cut by ODW: ([\d,]+) of ([\d,]+) characters left out; "
    r"GitHub takes at most ([\d,]+) bytes here\)$"
)


def _send(client: RepositoryClient, verb: str, suffix: str, body: dict[str, Any]) -> None:
    """`body` sent as given, no ODW writer in between (errors typed as the adapters' are)."""
    raw = Transport(client.context, client.installation_id, client.full_name, {
        "issues": "write", "pull_requests": "write", "checks": "write",
    })  # fmt: skip
    raw.call("raw", lambda: raw.request(verb, suffix, body=body), kind="update")


def _pull(client: RepositoryClient, repo: Repository) -> int:
    base = repo.git.sha("refs/heads/main")
    repo.git.commit_files("roadmap-1-1", {"x.txt": "x"}, "x", parent=base)
    return client.pulls.create_pull("roadmap-1-1", "main", "1.1", "body").number


def _cut(text: str, original: str, limit: int) -> int:
    """How many characters `text` says were left out of `original`, checked."""
    found = HOW_MUCH.search(text)
    assert found is not None, text[-200:]
    left_out, total, said_limit = (int(g.replace(",", "")) for g in found.groups())
    assert total == len(original) and said_limit == limit
    kept = text[: text.index("\n\n… (cut by ODW")]
    assert original.startswith(kept) and left_out == len(original) - len(kept)
    assert len(text.encode()) <= limit
    return left_out


def test_a_comment_is_refused_past_262144_bytes_as_github_does(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    number = _pull(client, repo)
    comments = f"/issues/{number}/comments"
    # GitHub says "maximum is 65536 characters" but stores 262,144 bytes, ASCII or not.
    _send(client, "POST", comments, {"body": "x" * 262_144})
    _send(client, "POST", comments, {"body": RAINBOW * 65_536})
    assert len(fake.comments) == 2
    before = dict(fake.comments)
    with pytest.raises(Unprocessable, match=r"Body is too long \(maximum is 65536 characters\)"):
        _send(client, "POST", comments, {"body": RAINBOW * 65_536 + "x"})
    with pytest.raises(Unprocessable, match="Body is too long"):
        _send(client, "PATCH", f"/issues/comments/{min(before)}", {"body": "é" * 131_073})
    assert fake.comments == before and len(fake.comments[min(before)].body) == 262_144


def test_a_pull_request_body_is_refused_past_65536_characters_as_github_does(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    number = _pull(client, repo)
    # A pull request body counts characters: 65,536 four-byte ones are stored.
    _send(client, "PATCH", f"/pulls/{number}", {"body": RAINBOW * 65_536})
    assert fake.pulls[(REPO, number)].body == RAINBOW * 65_536
    with pytest.raises(Unprocessable, match=r"body is too long \(maximum is 65536 characters\)"):
        _send(client, "PATCH", f"/pulls/{number}", {"body": "x" * 65_537})
    assert fake.pulls[(REPO, number)].body == RAINBOW * 65_536


def test_check_run_output_is_refused_past_65535_bytes_as_github_does(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    sha = repo.git.sha("refs/heads/main")
    # Bytes, not characters: 40,000 two-byte characters are 80,000 bytes.
    for field in ("summary", "text"):
        output = {"title": "t", "summary": "s", field: "é" * 40_000}
        with pytest.raises(Unprocessable, match=f"{field} exceeds a maximum bytesize of 65535"):
            _send(client, "POST", "/check-runs", {"name": "n", "head_sha": sha, "output": output})
    assert fake.check_runs == {}
    output = {"title": "t", "summary": "é" * 32_767 + "x"}  # 65,535 bytes
    _send(client, "POST", "/check-runs", {"name": "n", "head_sha": sha, "output": output})
    assert len(fake.check_runs) == 1


def test_gate_output_of_70000_non_ascii_characters_is_cut_to_bytes_and_says_how_much(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    """The real client against a fake that counts bytes: 70,000 characters of
    non-ASCII text (175,000 bytes) are accepted, cut at a character boundary,
    and the check run says how much was left out."""
    sha = repo.git.sha("refs/heads/main")
    assert sha
    gate = "日本語のテスト出力です ✓ ü € 😀\n" * 3_500  # 20 characters, 50 bytes
    assert len(gate) == 70_000 and len(gate.encode()) == 175_000
    run = client.checks.create_check_run(
        "ODW · 1.1", sha, CheckRunFields(title="t", summary=gate, text=gate)
    )
    output = fake.check_runs[run.id].output
    for field in ("summary", "text"):
        left_out = _cut(output[field], gate, CHECK_OUTPUT_LIMIT)
        # About 65,440 of the 175,000 bytes are kept: some 26,200 characters.
        assert 43_000 < left_out < 44_500
    updated = client.checks.update_check_run(run.id, CheckRunFields(title="t", summary=gate))
    assert updated.summary == output["summary"]


def test_every_body_writer_fits_githubs_limits_and_says_how_much_it_cut(
    client: RepositoryClient, fake: FakeGitHub, repo: Repository
) -> None:
    number = _pull(client, repo)
    comment = client.comments.create_comment(number, LONG)
    _cut(fake.comments[comment.id].body, LONG, BODY_LIMIT)
    client.comments.edit_comment(comment.id, LONG + LONG)
    _cut(fake.comments[comment.id].body, LONG + LONG, BODY_LIMIT)
    wide = RAINBOW * 70_000  # 70,000 characters: GitHub refuses it as a pull request body
    client.pulls.update_pull(number, body=wide)
    _cut(fake.pulls[(REPO, number)].body, wide, BODY_LIMIT)


@pytest.mark.parametrize("limit", [100, 65_535, 65_536], ids=["small", "check-output", "body"])
def test_fit_cuts_to_the_byte_and_never_splits_a_character(limit: int) -> None:
    text = "aé€😀" * 40_000
    cut = fit(text, limit)
    assert limit - 12 < len(cut.encode()) <= limit
    _cut(cut, text, limit)
    assert fit("short", limit) == "short"
    assert fit("x" * limit, limit) == "x" * limit


def test_a_lone_surrogate_is_sent_as_a_question_mark_not_an_error() -> None:
    assert fit("a\ud800b", 100) == "a?b"
    assert HOW_MUCH.search(fit("\ud800" * 200, 150))
