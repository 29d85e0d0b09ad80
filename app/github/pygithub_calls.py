"""Every PyGithub method and constructor `app/github` calls, with the arguments
it passes, so one test can bind each against the installed PyGithub.

`pyproject.toml` names a floor for PyGithub; a call that exists only in a newer
release (as `Workflow.create_dispatch(return_run_details=...)` does, from 2.10)
fails every time on an older one. `tests/github/test_pygithub_floor.py` binds
each entry with `inspect.signature` and checks that the table names every
PyGithub call the package's source makes. Add a row here with each new call.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PyGithubCall:
    """`target` is `module.Class.method` (or `module.Class` for a constructor);
    `positional` is how many arguments go by position, `keywords` their names."""

    target: str
    positional: int = 0
    keywords: tuple[str, ...] = ()
    where: str = ""


CALLS: tuple[PyGithubCall, ...] = (
    PyGithubCall(
        "github.MainClass.Github",
        keywords=(
            "auth",
            "base_url",
            "timeout",
            "user_agent",
            "per_page",
            "retry",
            "seconds_between_requests",
            "seconds_between_writes",
            "lazy",
        ),
        where="transport._github",
    ),
    PyGithubCall("github.MainClass.Github.get_repo", 1, where="Transport.__init__"),
    PyGithubCall(
        "github.Requester.Requester.requestJsonAndCheck",
        2,
        ("parameters", "headers", "input"),
        where="Transport.request, Transport.paginate, Transport._mint, landing_writes.send",
    ),
    PyGithubCall("github.Requester.Requester.requestJson", 2, where="GitHubArtifacts._locate"),
    PyGithubCall(
        "github.Requester.Requester.graphql_named_mutation",
        3,
        where="GitHubComments.minimize_comment, GitHubPulls.mark_ready",
    ),
    PyGithubCall("github.GithubException.GithubException", 3, where="artifacts"),
    PyGithubCall("github.Auth.Auth.authentication", 1, where="_HeaderAuth (PyGithub calls it)"),
    PyGithubCall("github.Repository.Repository.get_workflow", 1, where="GitHubDispatch"),
    PyGithubCall(
        "github.Workflow.Workflow.create_dispatch",
        2,
        ("throw", "return_run_details"),
        where="GitHubDispatch.dispatch",
    ),
    PyGithubCall("github.Workflow.Workflow.create_dispatch", 2, ("throw",), "dispatch on GHES"),
    PyGithubCall(
        "github.Repository.Repository.create_check_run",
        2,
        ("status", "conclusion", "details_url", "external_id", "output", "actions"),
        where="GitHubChecks.create_check_run",
    ),
    PyGithubCall("github.Repository.Repository.get_issue", 1, where="GitHubComments"),
    PyGithubCall("github.Issue.Issue.create_comment", 1, where="GitHubComments"),
    PyGithubCall("github.IssueComment.IssueComment", 1, ("url",), where="GitHubReactions"),
    PyGithubCall("github.IssueComment.IssueComment.create_reaction", 1, where="GitHubReactions"),
    PyGithubCall(
        "github.Repository.Repository.create_pull",
        keywords=("base", "head", "title", "body", "draft"),
        where="GitHubPulls.create_pull",
    ),
    PyGithubCall("github.Repository.Repository.get_pull", 1, where="GitHubPulls.merge_pull"),
    PyGithubCall(
        "github.PullRequest.PullRequest.merge",
        keywords=("commit_title", "commit_message", "merge_method", "sha"),
        where="GitHubPulls.merge_pull",
    ),
    PyGithubCall("github.Repository.Repository.get_contents", 1, ("ref",), "GitHubContents"),
    PyGithubCall("github.Repository.Repository.create_git_ref", 2, where="GitHubContents"),
)

# Attributes `app/github` reads from PyGithub's objects: `(class, names)`.
ATTRIBUTES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("github.GithubException.GithubException", ("status", "headers", "data")),
    ("github.MainClass.Github", ("requester",)),
    ("github.Repository.Repository", ("url", "raw_data")),
    ("github.ContentFile.ContentFile", ("encoding", "content", "decoded_content")),
    ("github.CheckRun.CheckRun", ("raw_data",)),
    ("github.PullRequest.PullRequest", ("raw_data",)),
    ("github.IssueComment.IssueComment", ("raw_data",)),
    ("github.PullRequestMergeStatus.PullRequestMergeStatus", ("sha", "merged", "message")),
    ("github.Auth.Auth", ("token_type", "token")),
)
