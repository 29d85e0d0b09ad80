"""REST response bodies, shaped by GitHub's own examples in the OpenAPI
description: each is the published example with our state written over it,
and every URL rooted at the fake's base (PyGithub follows them)."""

from __future__ import annotations

import base64
import json
import time
from typing import TYPE_CHECKING, Any

from tests.fakegithub import state as s

if TYPE_CHECKING:
    from tests.fakegithub.server import FakeGitHub

# "Get repository content" returns a file's content in the object form up to 1 MB.
CONTENT_LIMIT = 1024 * 1024


def iso(ts: float | None) -> str | None:
    if ts is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


class Shapes:
    def __init__(self, fake: FakeGitHub) -> None:
        self.fake = fake

    def example(self, name: str, repo: s.Repository | None = None) -> Any:
        text = json.dumps(self.fake.openapi.example(name))
        text = text.replace("https://api.github.com", self.fake.api_url)
        text = text.replace("https://uploads.github.com", self.fake.host_url)
        text = text.replace("https://github.com", self.fake.host_url)
        text = text.replace("http://github.com", self.fake.host_url)
        data = json.loads(text)
        if repo is not None:
            _rewrite_repos(data, repo, self.fake)
        return data

    # -- people and repositories -------------------------------------------

    def user(self, login: str, kind: str = "User") -> dict[str, Any]:
        data = self.example("simple-user")
        user_id = self.fake.user_id(login)
        data.update(
            login=login,
            id=user_id,
            node_id=f"U_{user_id}",
            type=kind,
            url=f"{self.fake.api_url}/users/{login}",
            html_url=f"{self.fake.host_url}/{login}",
        )
        for key, value in list(data.items()):
            if isinstance(value, str) and "/users/octocat" in value:
                data[key] = value.replace("/users/octocat", f"/users/{login}")
        return data

    def repository(self, repo: s.Repository) -> dict[str, Any]:
        data = self.example("full-repository-default-response", repo)
        data.update(default_branch=repo.default_branch, private=True, visibility="private")
        # GitHub's example omits `language` and is a fork; ours is neither.
        data.update(language=None, fork=False)
        data.update(
            allow_squash_merge=repo.allow_squash_merge,
            allow_merge_commit=repo.allow_merge_commit,
            allow_rebase_merge=repo.allow_rebase_merge,
        )
        data.pop("parent", None)
        data.pop("source", None)
        return data

    # -- objects -------------------------------------------------------------

    def check_run(self, run: s.CheckRun) -> dict[str, Any]:
        repo = self.fake.repos[run.repo]
        data = self.example("check-run", repo)
        data.update(
            id=run.id,
            node_id=f"CR_{run.id}",
            name=run.name,
            head_sha=run.head_sha,
            external_id=run.external_id,
            url=f"{self.fake.api_url}/repos/{run.repo}/check-runs/{run.id}",
            html_url=f"{self.fake.host_url}/{run.repo}/runs/{run.id}",
            details_url=run.details_url,
            status=run.status,
            conclusion=run.conclusion,
            started_at=iso(run.started_at),
            completed_at=iso(run.completed_at),
            pull_requests=[],
        )
        output = {
            "title": run.output.get("title"),
            "summary": run.output.get("summary"),
            "text": run.output.get("text"),
            "annotations_count": 0,
            "annotations_url": f"{data['url']}/annotations",
        }
        data["output"] = output
        data["check_suite"] = {"id": run.id}
        data["app"] = self.app(run.app_id)
        data.pop("deployment", None)
        return data

    def app(self, app_id: int | None = None) -> dict[str, Any]:
        """The GitHub App `app_id` (ODW's by default), as `check_run.app` shows it."""
        app_id = self.fake.app_id if app_id is None else app_id
        slug = self.fake.apps[app_id]
        data = self.example("integration")
        data.update(id=app_id, slug=slug, name=slug, node_id=f"A_{app_id}")
        return data

    def comment(self, comment: s.Comment) -> dict[str, Any]:
        repo = self.fake.repos[comment.repo]
        data = self.example("issue-comment", repo)
        data.update(
            id=comment.id,
            node_id=f"IC_{comment.id}",
            body=comment.body,
            user=self.user(comment.user, comment.user_type),
            created_at=iso(comment.created_at),
            updated_at=iso(comment.updated_at),
            url=f"{self.fake.api_url}/repos/{comment.repo}/issues/comments/{comment.id}",
            html_url=f"{self.fake.host_url}/{comment.repo}/issues/{comment.number}"
            f"#issuecomment-{comment.id}",
            issue_url=f"{self.fake.api_url}/repos/{comment.repo}/issues/{comment.number}",
            author_association="MEMBER" if comment.user_type == "User" else "NONE",
        )
        data.pop("performed_via_github_app", None)
        data.pop("reactions", None)
        return data

    def reaction(self, reaction_id: int, login: str, content: str) -> dict[str, Any]:
        data = self.example("reaction")
        data.update(
            id=reaction_id, node_id=f"R_{reaction_id}", user=self.user(login), content=content
        )
        return data

    def permission(self, login: str, role: str) -> dict[str, Any]:
        data = self.example(
            "repository-collaborator-permission-response-if-user-has-admin-permissions"
        )
        # "`maintain` is mapped to `write` and `triage` to `read`" in `permission`;
        # `role_name` names the role itself
        # (https://docs.github.com/rest/collaborators/collaborators#get-repository-permissions-for-a-user).
        permission = {"maintain": "write", "triage": "read"}.get(role, role)
        data.update(permission=permission, role_name=role)
        data["user"] = {**self.user(login), "permissions": _permission_flags(role)}
        data["user"]["role_name"] = role
        return data

    def pull(self, pull: s.PullRequest, simple: bool = False) -> dict[str, Any]:
        repo = self.fake.repos[pull.repo]
        data = self.example("pull-request-simple-items" if simple else "pull-request", repo)
        if simple:
            data = data[0]
        api = f"{self.fake.api_url}/repos/{pull.repo}"
        head_ref = f"refs/pull/{pull.number}/head" if pull.head_repo else f"refs/heads/{pull.head}"
        head_sha = repo.git.sha(head_ref) or ""
        base_sha = repo.git.sha(f"refs/heads/{pull.base}") or ""
        data.update(
            id=pull.id,
            node_id=f"PR_{pull.id}",
            number=pull.number,
            state=pull.state,
            title=pull.title,
            body=pull.body,
            draft=pull.draft,
            user=self.user(pull.user, "Bot" if pull.user.endswith("[bot]") else "User"),
            url=f"{api}/pulls/{pull.number}",
            html_url=f"{self.fake.host_url}/{pull.repo}/pull/{pull.number}",
            issue_url=f"{api}/issues/{pull.number}",
            comments_url=f"{api}/issues/{pull.number}/comments",
            commits_url=f"{api}/pulls/{pull.number}/commits",
            review_comments_url=f"{api}/pulls/{pull.number}/comments",
            statuses_url=f"{api}/statuses/{head_sha}",
            merge_commit_sha=pull.merge_commit_sha,
            merged_at=iso(pull.created_at) if pull.merged else None,
            closed_at=iso(pull.created_at) if pull.state == "closed" else None,
            created_at=iso(pull.created_at),
            updated_at=iso(pull.created_at),
            requested_reviewers=[],
            requested_teams=[],
            assignees=[],
            labels=[],
            milestone=None,
            assignee=None,
            auto_merge=None,
            active_lock_reason=None,
        )
        for side, ref, sha in (("head", pull.head, head_sha), ("base", pull.base, base_sha)):
            data[side].update(
                ref=ref, sha=sha, label=f"{repo.owner}:{ref}", user=self.user(repo.owner)
            )
        if pull.head_repo:
            fork_owner = pull.head_repo.partition("/")[0]
            data["head"].update(label=f"{fork_owner}:{pull.head}", user=self.user(fork_owner))
            data["head"]["repo"] = self.fork_of(
                data["head"].get("repo") or {}, repo, pull.head_repo
            )
        if not simple:
            data.update(
                merged=pull.merged,
                mergeable=None if pull.merged else True,
                mergeable_state="draft" if pull.draft else "clean",
                merged_by=self._merger(pull),
            )
        return data

    def fork_of(self, node: Any, repo: s.Repository, fork: str) -> dict[str, Any]:
        """`node`, a repository object of `repo` in GitHub's shape, as the fork
        `fork`. A fork's pull request has the fork as `head.repo` and the
        repository as `base.repo` (REST "Get a pull request"; the webhook
        examples' `pull_request.head.repo`, `fork: true`)."""
        owner, _, name = fork.partition("/")
        text = json.dumps(node).replace(f"/repos/{repo.full_name}", f"/repos/{fork}")
        data: dict[str, Any] = json.loads(text.replace(f"/{repo.full_name}", f"/{fork}"))
        fork_id = self.fake.fork_id(fork)
        data.update(id=fork_id, node_id=f"R_{fork_id}", name=name, full_name=fork, fork=True)
        if isinstance(data.get("owner"), dict):
            person = self.user(owner)
            data["owner"].update({k: v for k, v in person.items() if k in data["owner"]})
        return data

    def _merger(self, pull: s.PullRequest) -> dict[str, Any] | None:
        if not pull.merged:
            return None
        login = pull.merged_by or self.fake.bot_login
        return self.user(login, "Bot" if login.endswith("[bot]") else "User")

    def git_ref(self, repo: s.Repository, ref: str, sha: str) -> dict[str, Any]:
        data = self.example("git-ref", repo)
        url = f"{self.fake.api_url}/repos/{repo.full_name}/git/{ref}"
        data.update(ref=ref, node_id=f"REF_{sha[:8]}", url=url)
        data["object"] = {
            "type": "commit",
            "sha": sha,
            "url": f"{self.fake.api_url}/repos/{repo.full_name}/git/commits/{sha}",
        }
        return data

    def content(self, repo: s.Repository, path: str, sha: str, blob: bytes) -> dict[str, Any]:
        data = self.example("content-file-response-if-content-is-a-file", repo)
        api = f"{self.fake.api_url}/repos/{repo.full_name}"
        data.update(
            type="file",
            encoding="base64",
            size=len(blob),
            name=path.rsplit("/", 1)[-1],
            path=path,
            content=base64.b64encode(blob).decode(),
            sha=repo.git.git("rev-parse", f"{sha}:{path}"),
            url=f"{api}/contents/{path}?ref={sha}",
            git_url=None,
            html_url=f"{self.fake.host_url}/{repo.full_name}/blob/{sha}/{path}",
            download_url=None,
        )
        data["_links"] = {"self": data["url"], "git": None, "html": data["html_url"]}
        if len(blob) > CONTENT_LIMIT:
            # Over 1 MB the object form carries no content: `encoding: "none"`
            # and an empty `content`; only the raw media type returns the bytes
            # (https://docs.github.com/rest/repos/contents#get-repository-content,
            # https://github.blog/changelog/2022-05-03-increased-file-size-limit-when-retrieving-file-contents-via-rest-api,
            # reported in https://github.com/palantir/go-githubapp/issues/227).
            data.update(encoding="none", content="")
        return data

    def workflow(self, repo: s.Repository, file_name: str, name: str) -> dict[str, Any]:
        """A workflow as `GET .../actions/workflows/{id}` answers (OpenAPI `workflow`)."""
        from tests.fakegithub.routes_actions import workflow_id

        data = self.example("workflow", repo)
        ident = workflow_id(file_name)
        path = f".github/workflows/{file_name}"
        data.update(
            id=ident,
            node_id=f"W_{ident}",
            name=name,
            path=path,
            state="active",
            url=f"{self.fake.api_url}/repos/{repo.full_name}/actions/workflows/{ident}",
            html_url=f"{self.fake.host_url}/{repo.full_name}/blob/{repo.default_branch}/{path}",
            badge_url=f"{self.fake.host_url}/{repo.full_name}/workflows/{name}/badge.svg",
        )
        return data

    def workflow_run(self, run: s.WorkflowRun) -> dict[str, Any]:
        repo = self.fake.repos[run.repo]
        data = self.example("workflow-run", repo)
        api = f"{self.fake.api_url}/repos/{run.repo}/actions/runs/{run.id}"
        data.update(
            id=run.id,
            name=run.name,
            node_id=f"WFR_{run.id}",
            head_branch=run.ref,
            head_sha=run.head_sha,
            # GitHub's example shows the ref after an `@` (".github/workflows/build.yml@main").
            path=f".github/workflows/{run.workflow}@{run.ref}",
            run_number=run.id,
            event=run.event,
            display_title=run.display_title,
            status=run.status,
            conclusion=run.conclusion,
            workflow_id=run.workflow_id,
            url=api,
            html_url=f"{self.fake.host_url}/{run.repo}/actions/runs/{run.id}",
            jobs_url=f"{api}/jobs",
            logs_url=f"{api}/logs",
            artifacts_url=f"{api}/artifacts",
            cancel_url=f"{api}/cancel",
            rerun_url=f"{api}/rerun",
            check_suite_url=f"{self.fake.api_url}/repos/{run.repo}/check-suites/{run.id}",
            workflow_url=f"{self.fake.api_url}/repos/{run.repo}/actions/workflows/"
            f"{run.workflow_id}",
            previous_attempt_url=None,
            created_at=iso(run.created_at),
            updated_at=iso(run.created_at),
            run_started_at=iso(run.created_at),
            run_attempt=run.run_attempt,
            pull_requests=[],
            referenced_workflows=[],
            actor=self.person(run.actor or self.fake.bot_login),
            triggering_actor=self.person(run.triggering_actor or self.fake.bot_login),
        )
        if run.head_repo and run.head_repo != run.repo:
            owner, name = run.head_repo.split("/")
            head = data["head_repository"]
            head.update(
                id=self.fake.user_id(f"repo:{run.head_repo}"), name=name, full_name=run.head_repo
            )
            head["owner"].update(login=owner, id=self.fake.user_id(owner))
        return data

    def person(self, login: str) -> dict[str, Any]:
        """A user, or a bot when the login ends in `[bot]` (as GitHub names Apps' bots)."""
        return self.user(login, "Bot" if login.endswith("[bot]") else "User")

    def job(self, run: s.WorkflowRun, job: s.Job) -> dict[str, Any]:
        data = self.example("job")
        api = f"{self.fake.api_url}/repos/{run.repo}/actions"
        data.update(
            id=job.id,
            run_id=run.id,
            run_attempt=run.run_attempt,
            name=job.name,
            workflow_name=run.name,
            head_branch=run.ref,
            head_sha=run.head_sha,
            status=job.status,
            conclusion=job.conclusion,
            node_id=f"J_{job.id}",
            url=f"{api}/jobs/{job.id}",
            html_url=f"{self.fake.host_url}/{run.repo}/actions/runs/{run.id}/job/{job.id}",
            run_url=f"{api}/runs/{run.id}",
            check_run_url=f"{self.fake.api_url}/repos/{run.repo}/check-runs/{job.id}",
            created_at=iso(run.created_at),
            started_at=iso(run.created_at),
            completed_at=iso(run.created_at) if job.status == "completed" else None,
            steps=[],
        )
        return data

    def artifact(self, run: s.WorkflowRun, artifact: s.Artifact) -> dict[str, Any]:
        data = self.example("artifact")
        api = f"{self.fake.api_url}/repos/{run.repo}/actions/artifacts/{artifact.id}"
        data.update(
            id=artifact.id,
            node_id=f"A_{artifact.id}",
            name=artifact.name,
            size_in_bytes=len(artifact.data),
            url=api,
            archive_download_url=f"{api}/zip",
            expired=artifact.expired,
            digest=None,
            created_at=iso(artifact.created_at),
            updated_at=iso(artifact.created_at),
            expires_at=iso(artifact.created_at + 90 * 86400),
        )
        data["workflow_run"] = {
            "id": run.id,
            "repository_id": self.fake.repos[run.repo].id,
            "head_repository_id": self.fake.repos[run.repo].id,
            "head_branch": run.ref,
            "head_sha": run.head_sha,
        }
        return data


def _permission_flags(role: str) -> dict[str, bool]:
    order = ["read", "triage", "write", "maintain", "admin"]
    rank = order.index(role) if role in order else -1
    return {
        "pull": rank >= 0,
        "triage": rank >= 1,
        "push": rank >= 2,
        "maintain": rank >= 3,
        "admin": rank >= 4,
    }


def _rewrite_repos(node: Any, repo: s.Repository, fake: FakeGitHub) -> None:
    """Point every repository object inside an example at `repo`."""
    if isinstance(node, list):
        for item in node:
            _rewrite_repos(item, repo, fake)
        return
    if not isinstance(node, dict):
        return
    if isinstance(node.get("full_name"), str) and isinstance(node.get("owner"), dict):
        old = node["full_name"]
        text = json.dumps(node).replace(f"/repos/{old}", f"/repos/{repo.full_name}")
        text = text.replace(f"/{old}", f"/{repo.full_name}")
        fresh = json.loads(text)
        node.clear()
        node.update(fresh)
        node.update(id=repo.id, node_id=f"R_{repo.id}", name=repo.name, full_name=repo.full_name)
        node["owner"].update(login=repo.owner, id=fake.user_id(repo.owner))
        if "default_branch" in node:
            node["default_branch"] = repo.default_branch
        return
    for value in node.values():
        _rewrite_repos(value, repo, fake)
