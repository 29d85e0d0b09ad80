"""The fake GitHub: a real HTTP server on loopback holding GitHub's state.

REST lives under `/api/v3` (so `ODW_GITHUB_API_URL` is exercised with a
prefix, as on GitHub Enterprise Server), git smart HTTP at
`/<owner>/<repo>.git`, artifact storage on `localhost` (another host name than
the API's `127.0.0.1`, so a client that forwards its token is caught), and
test-only controls under `/_fake/`. Every API request is checked against
GitHub's OpenAPI description; a violation answers 422 and is recorded so the
test that sent it fails (see `assert_no_violations`).
"""

from __future__ import annotations

import itertools
import json
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

from tests.fakegithub import state as s
from tests.fakegithub.faults import Fault, Faults, late
from tests.fakegithub.gitrepo import BareRepo
from tests.fakegithub.hooks import Webhooks
from tests.fakegithub.openapi import OpenApi, load
from tests.fakegithub.oracles import REST_OPENAPI
from tests.fakegithub.shapes import Shapes

API_PREFIX = "/api/v3"
TOKEN_LIFETIME = 3600
JWT_ROUTES = (
    "/app",
    "/app/installations",
    "/app/installations/{installation_id}",
    "/repos/{owner}/{repo}/installation",
)
TOKEN_ROUTE = "/app/installations/{installation_id}/access_tokens"
# Asked with no credentials: the manifest code is the secret (app_registration.py).
OPEN_ROUTES = ("/app-manifests/{code}/conversions",)


class Reply(Exception):
    def __init__(self, status: int, body: Any = None, headers: dict[str, str] | None = None):
        super().__init__(status)
        self.status = status
        self.body = body
        self.headers = headers or {}


def error(status: int, message: str) -> Reply:
    return Reply(status, {"message": message, "documentation_url": "https://docs.github.com/rest"})


@dataclass
class Call:
    method: str
    path: str
    template: str
    params: dict[str, str]
    query: dict[str, str]
    body: Any
    token: s.Token | None
    headers: dict[str, str] = field(default_factory=dict)

    def int(self, name: str) -> int:
        try:
            return int(self.params[name])
        except ValueError:
            raise error(404, "Not Found") from None


Handler = Callable[["FakeGitHub", Call], Reply]
ROUTES: dict[tuple[str, str], Handler] = {}


def route(method: str, template: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        ROUTES[(method, template)] = fn
        return fn

    return register


class FakeGitHub:
    """Start with `start()`; `api_url` is what `ODW_GITHUB_API_URL` points at."""

    def __init__(
        self,
        root: Path,
        *,
        ghes: bool = False,
        webhook_url: str | None = None,
        webhook_secret: str = "fake-webhook-secret",  # noqa: S107 - a test secret
        openapi: OpenApi | None = None,
        validate_responses: bool = True,
        app_slug: str = "odw",
    ) -> None:
        self.root = root
        self.ghes = ghes
        self.openapi = openapi or load(REST_OPENAPI)
        self.validate_responses = validate_responses
        self.shapes = Shapes(self)
        self.lock = threading.RLock()
        self.app_id = 424242
        self.app_slug = app_slug
        self.app_name = app_slug.upper()
        self.bot_login = f"{self.app_slug}[bot]"
        # Codes of the manifest flow not exchanged yet: manifest, organisation, when.
        self.manifest_codes: dict[str, tuple[dict[str, Any], str | None, float]] = {}
        # Every GitHub App the fake knows: ODW's, and others tests register
        # (`add_app`) to create check runs ODW never created.
        self.apps: dict[int, str] = {self.app_id: self.app_slug}
        self._forks: dict[str, int] = {}
        key = _app_key()
        self.private_key_pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ).decode()
        self._public_key = key.public_key()
        self.repos: dict[str, s.Repository] = {}
        self.moved: dict[str, int] = {}  # an old OWNER/NAME -> the repository's id
        self.installations: dict[int, s.Installation] = {}
        self.tokens: dict[str, s.Token] = {}
        self.issued: list[str] = []  # every token ever minted, for secrecy scans
        self.pulls: dict[tuple[str, int], s.PullRequest] = {}
        self.comments: dict[int, s.Comment] = {}
        self.check_runs: dict[int, s.CheckRun] = {}
        self.runs: dict[int, s.WorkflowRun] = {}
        self.artifacts: dict[int, s.Artifact] = {}
        self.storage: dict[str, tuple[int, float]] = {}
        self.violations: list[str] = []
        self.requests: list[dict[str, Any]] = []
        self.faults = Faults()
        self._ids = itertools.count(1000)
        self._users: dict[str, int] = {}
        self._offset = 0.0
        self._in_flight = 0
        self.on_dispatch: list[Callable[[s.WorkflowRun], None]] = []
        # Seconds a new workflow run stays out of the run lists (GET .../runs)
        # after it is created: on github.com a dispatched run shows in the list
        # seconds later (dbt-labs/actions#107, Codex-/return-dispatch#183), while
        # GET .../runs/{id} finds it at once. 0: listed at once.
        self.run_visible_after = 0.0
        # Seconds after its upload before an artifact is listed (routes_actions).
        self.artifact_listing_delay = 0.0
        self.webhooks = Webhooks(self, webhook_url, webhook_secret)
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # -- lifecycle -------------------------------------------------------------

    def start(self, port: int = 0) -> FakeGitHub:
        self._server = make_server(
            "127.0.0.1", port, self.wsgi, threaded=True, request_handler=_QuietHandler
        )
        self.port = self._server.server_port
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        self.webhooks.start()
        return self

    def stop(self) -> None:
        self.webhooks.stop()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def host_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        return self.host_url + API_PREFIX

    @property
    def storage_url(self) -> str:
        return f"http://localhost:{self.port}/_storage"

    def git_url(self, full_name: str) -> str:
        return f"{self.host_url}/{full_name}.git"

    # -- time and ids --------------------------------------------------------

    def now(self) -> float:
        return time.time() + self._offset

    def advance(self, seconds: float) -> None:
        """Move the fake's clock (token expiry) forward."""
        self._offset += seconds

    def next_id(self) -> int:
        return next(self._ids)

    def user_id(self, login: str) -> int:
        with self.lock:
            return self._users.setdefault(login, 500 + len(self._users))

    def fork_id(self, full_name: str) -> int:
        """The repository id of the fork `full_name` (forks hold no git data here)."""
        with self.lock:
            if full_name not in self._forks:
                self._forks[full_name] = self.next_id()
            return self._forks[full_name]

    def become_app(
        self, app_id: int, slug: str, key: rsa.RSAPrivateKey, webhook_secret: str
    ) -> None:
        """The App registered through the manifest flow is the one the fake serves
        from now on: its id, slug (bot login), key and webhook secret."""
        with self.lock:
            self.apps.pop(self.app_id, None)
            self.app_id, self.app_slug = app_id, slug
            self.bot_login = f"{slug}[bot]"
            self.apps[app_id] = slug
            self.private_key_pem = key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            ).decode()
            self._public_key = key.public_key()
            self.webhooks.secret = webhook_secret

    def write_private_key(self, directory: Path) -> Path:
        path = directory / "app.pem"
        path.write_text(self.private_key_pem)
        path.chmod(0o600)
        return path

    # -- set-up by tests (what a person does on github.com) --------------------

    def create_repository(
        self, full_name: str, files: dict[str, str] | None = None, default_branch: str = "main"
    ) -> s.Repository:
        owner, name = full_name.split("/")
        git = BareRepo.create(self.root / owner / f"{name}.git", files or {}, default_branch)
        repo = s.Repository(self.next_id(), owner, name, default_branch, git)
        repo.collaborators[owner] = "admin"
        from tests.fakegithub import push_rules

        push_rules.install(repo, self.host_url)
        with self.lock:
            self.repos[full_name] = repo
        return repo

    def install(
        self, account: str, repositories: list[str], permissions: dict[str, str] | None = None
    ) -> s.Installation:
        installation = s.Installation(
            self.next_id(),
            account,
            list(repositories),
            permissions
            or {
                "actions": "write",
                "checks": "write",
                "contents": "write",
                "issues": "write",
                "metadata": "read",
                "pull_requests": "write",
            },
        )
        with self.lock:
            self.installations[installation.id] = installation
            for name in repositories:
                self.repos[name].installation_id = installation.id
        self.webhooks.send("installation", "created", installation=installation)
        return installation

    def uninstall(self, installation_id: int) -> None:
        """The account owner uninstalls the App: `installation` `deleted` is sent, its
        tokens stop working (401) and no new one is made (404 "Not Found")."""
        installation = self.installations[installation_id]
        self.webhooks.send("installation", "deleted", installation=installation)
        with self.lock:
            del self.installations[installation_id]
            for name in installation.repositories:
                if name in self.repos:
                    self.repos[name].installation_id = None
            for token in [t for t in self.tokens.values() if t.installation_id == installation_id]:
                del self.tokens[token.token]

    def suspend(self, installation_id: int, suspended: bool = True) -> None:
        """The account owner suspends (or unsuspends) the installation: `installation`
        `suspend` (`unsuspend`) is sent and, while suspended, creating a token answers
        403 "This installation has been suspended". What a token made before the
        suspension answers is not modelled (no public record found)."""
        installation = self.installations[installation_id]
        with self.lock:
            installation.suspended = suspended
        action = "suspend" if suspended else "unsuspend"
        self.webhooks.send("installation", action, installation=installation)

    def add_collaborator(self, full_name: str, login: str, role: str) -> None:
        self.repos[full_name].collaborators[login] = role

    def open_fork_pull(
        self, full_name: str, fork: str, branch: str, login: str, files: dict[str, str]
    ) -> s.PullRequest:
        """`login` opens a pull request from `fork`'s `branch`."""
        return self.open_pull_as(login, full_name, branch, files, from_fork=fork)

    def open_pull_as(
        self,
        login: str,
        full_name: str,
        head_branch: str,
        files: dict[str, str] | None = None,
        *,
        from_fork: str | None = None,
    ) -> s.PullRequest:
        """`login` opens a pull request into the default branch, as on github.com.

        From a fork (`from_fork`, OWNER/NAME; no permission on this repository
        needed): the head is a commit of `files` on the base, kept as GitHub
        keeps a fork's head, under `refs/pull/N/head` of this repository, and
        the fork is the pull request's `head.repo`. From this repository: the
        head is `head_branch` here, with `files` committed on it first (a writer
        pushing to it, creating it from the base when it does not exist).
        """
        repo = self.repos[full_name]
        base_sha = repo.git.sha(f"refs/heads/{repo.default_branch}")
        with self.lock:
            number = repo.next_number
            repo.next_number += 1
        if from_fork is not None:
            scratch = f"fork-scratch-{number}"
            sha = repo.git.commit_files(scratch, files or {}, f"{login}'s change", parent=base_sha)
            repo.git.git("update-ref", f"refs/pull/{number}/head", sha)
            repo.git.git("update-ref", "-d", f"refs/heads/{scratch}")
        elif files:
            parent = repo.git.sha(f"refs/heads/{head_branch}") or base_sha
            repo.git.commit_files(head_branch, files, f"{login}'s change", parent=parent)
        elif repo.git.sha(f"refs/heads/{head_branch}") is None:
            raise ValueError(f"{head_branch} does not exist in {full_name}")
        pull = s.PullRequest(
            self.next_id(), full_name, number, f"{login}'s change", "", head_branch,
            repo.default_branch, False, login, created_at=self.now(), head_repo=from_fork,
        )  # fmt: skip
        with self.lock:
            self.pulls[(full_name, number)] = pull
        self.webhooks.send("pull_request", "opened", pull=pull, sender=login)
        return pull

    def head_moved(self, repo: s.Repository, branch: str) -> None:
        """A branch moved: its open pull requests are synchronized, and one left
        with no commits ahead of its base is closed by GitHub itself (and cannot
        be reopened): a force-push to the base's commit closes the pull request
        (public reports: dimikot/git-grok#30, urbit/vere#723, genuinetools/binctr#2)."""
        for pull in list(self.pulls.values()):
            if pull.repo != repo.full_name or pull.head != branch or pull.state != "open":
                continue
            head = repo.git.refs().get(f"refs/heads/{branch}")
            base = repo.git.refs().get(f"refs/heads/{pull.base}")
            if head is not None and base is not None and repo.git.is_ancestor(head, base):
                with self.lock:
                    pull.state = "closed"
                self.webhooks.send("pull_request", "closed", pull=pull)
            else:
                self.webhooks.send("pull_request", "synchronize", pull=pull)

    def close_pull_as(self, login: str, full_name: str, number: int) -> None:
        """`login` closes the pull request unmerged. Its author may close it with no
        permission on the repository ("Closing a pull request", GitHub docs)."""
        pull = self.pulls[(full_name, number)]
        with self.lock:
            assert pull.state == "open"
            pull.state = "closed"
        self.webhooks.send("pull_request", "closed", pull=pull, sender=login)

    def comment_as(self, login: str, full_name: str, number: int, body: str) -> s.Comment:
        """A person comments on an issue or pull request (sends issue_comment)."""
        return self.add_comment(full_name, number, body, login, "User")

    def add_comment(
        self, full_name: str, number: int, body: str, login: str, kind: str
    ) -> s.Comment:
        now = self.now()
        comment = s.Comment(self.next_id(), full_name, number, body, login, kind, now, now)
        with self.lock:
            self.comments[comment.id] = comment
        self.webhooks.send("issue_comment", "created", comment=comment)
        return comment

    def merge_as(self, login: str, full_name: str, number: int) -> str:
        """A person (a maintainer) marks the pull request ready and squash-merges it
        on github.com; a fork's head is its `refs/pull/N/head`."""
        repo, pull = self.repos[full_name], self.pulls[(full_name, number)]
        with self.lock:
            head_ref = f"refs/pull/{number}/head" if pull.head_repo else f"refs/heads/{pull.head}"
            head = repo.git.sha(head_ref)
            base = repo.git.sha(f"refs/heads/{pull.base}")
            assert head and base and pull.state == "open"
            squashed = repo.git.squash(base, head, f"{pull.title} (#{number})")
            assert squashed and repo.git.set_ref(f"refs/heads/{pull.base}", squashed, base)
            pull.draft, pull.merged, pull.state = False, True, "closed"
            pull.merge_commit_sha, pull.merged_by = squashed, login
        self.webhooks.send(
            "push", None, repo=repo, ref=f"refs/heads/{pull.base}", before=base, after=squashed
        )
        self.webhooks.send("pull_request", "closed", pull=pull, sender=login)
        return squashed

    def add_app(self, app_id: int, slug: str) -> None:
        """Another GitHub App, installed on the same repositories as ODW."""
        with self.lock:
            self.apps[app_id] = slug

    def create_check_run_as_app(
        self,
        app_id: int,
        full_name: str,
        name: str,
        head_sha: str,
        *,
        external_id: str = "",
        conclusion: str = "failure",
        actions: list[dict[str, str]] | None = None,
    ) -> s.CheckRun:
        """App `app_id` (`add_app`) creates a completed check run with `actions`
        buttons, as `POST /repos/{owner}/{repo}/check-runs` with its own token
        would: any App with `checks: write` may name a check run anything."""
        now = self.now()
        run = s.CheckRun(
            self.next_id(), full_name, name, head_sha, "completed", conclusion, external_id,
            None, {"title": name, "summary": name}, list(actions or []), now, now, app_id=app_id,
        )  # fmt: skip
        with self.lock:
            self.check_runs[run.id] = run
        self.webhooks.send("check_run", "completed", check_run=run)
        return run

    def click_check_run_action(self, check_run_id: int, identifier: str, login: str) -> None:
        """`login` clicks a button of the check run. GitHub sends `requested_action`
        to the App that created the check run ("check_run" in "Webhook events and
        payloads"); the fake has one receiver, so a click on another App's check
        run reaches ODW as it does when that App's webhook URL and secret are
        ODW's (a second App, say staging, pointed at the same service)."""
        run = self.check_runs[check_run_id]
        if identifier not in {a["identifier"] for a in run.actions}:
            raise ValueError(f"check run {check_run_id} has no button {identifier!r}")
        self.webhooks.send(
            "check_run", "requested_action", check_run=run, identifier=identifier, sender=login
        )

    def dispatch_as(
        self, login: str, full_name: str, workflow: str, ref: str, inputs: dict[str, str]
    ) -> s.WorkflowRun:
        """A writer dispatches a workflow of their own choosing (`workflow` is a
        file name under `.github/workflows/`) on `ref`: a run whose actor is
        `login`, which no on-dispatch runner picks up (the test drives it)."""
        from tests.fakegithub import routes_actions

        return routes_actions.dispatch_as(self, login, full_name, workflow, ref, inputs)

    def rerun_as(self, login: str, run_id: int) -> None:
        """A person re-runs a run (same id, next attempt, their triggering_actor)."""
        from tests.fakegithub import routes_actions

        routes_actions.rerun(self, run_id, login)

    def start_run(self, run_id: int) -> None:
        from tests.fakegithub import routes_actions

        routes_actions.start_run(self, run_id)

    def upload_artifact(self, run_id: int, name: str, files: dict[str, bytes | str]) -> None:
        from tests.fakegithub import routes_actions

        routes_actions.upload_artifact(self, run_id, name, routes_actions.zip_files(files))

    def expire_artifacts(self, run_id: int) -> None:
        """The run's artifacts pass retention (`expired: true`, download 410)."""
        from tests.fakegithub import routes_actions

        routes_actions.expire_artifacts(self, run_id)

    def complete_run(self, run_id: int, conclusion: str = "success") -> None:
        from tests.fakegithub import routes_actions

        routes_actions.complete_run(self, run_id, conclusion)

    def protect_branch(
        self, full_name: str, branch: str, required: list[str] | None = None
    ) -> None:
        """Branch protection: pushes to `branch` are refused (GH006) and merging a
        pull request into it needs each `required` check or status to pass."""
        from tests.fakegithub import routes_protection

        repo = self.repos[full_name]
        with self.lock:
            repo.protection[branch] = list(required or [])
        routes_protection.write_hook(repo)

    def merge_settings(
        self, full_name: str, *, squash: bool = True, merge_commit: bool = True, rebase: bool = True
    ) -> None:
        """An admin changes the repository's allowed merge methods (Settings → General →
        Pull Requests; `allow_squash_merge` and its siblings in "Get a repository")."""
        repo = self.repos[full_name]
        with self.lock:
            repo.allow_squash_merge = squash
            repo.allow_merge_commit = merge_commit
            repo.allow_rebase_merge = rebase

    def rename_repository(self, old: str, new: str) -> None:
        """An admin renames `old` to `new` (another owner: a transfer); the old name
        answers with redirects as GitHub's does (`moves.py`)."""
        from tests.fakegithub import moves

        moves.rename(self, old, new)

    def add_ruleset(
        self, full_name: str, branch: str, rules: tuple[str, ...] = ("pull_request",)
    ) -> None:
        """A repository ruleset on `branch`: pushes to it are refused with GH013 naming
        each rule ("pull_request": changes through a pull request; "update": the ref
        cannot be updated at all). See `push_rules.py` for the words and sources."""
        from tests.fakegithub import push_rules

        repo = self.repos[full_name]
        unknown = set(rules) - set(push_rules.RULE_WORDS)
        if unknown:
            raise ValueError(f"the fake models no ruleset rule {sorted(unknown)}")
        with self.lock:
            repo.rulesets[branch] = list(rules)
        push_rules.write_rules(repo, self.host_url)

    def set_status(self, full_name: str, sha: str, context: str, state: str) -> None:
        """A CI system reports a commit status (as `POST /statuses/{sha}` would)."""
        from tests.fakegithub import routes_protection

        repo = self.repos[full_name]
        status = routes_protection.status_record(
            self, repo, sha, {"state": state, "context": context}
        )
        with self.lock:
            repo.statuses.setdefault(sha, []).append(status)

    def open_issue(self, full_name: str) -> int:
        repo = self.repos[full_name]
        with self.lock:
            number = repo.next_number
            repo.next_number += 1
            repo.issues.add(number)
        return number

    def token_requests(self) -> int:
        return sum(
            1
            for r in self.requests
            if r["method"] == "POST" and r["path"].endswith("access_tokens")
        )

    def inject(self, method: str, template: str, fault: Fault, times: int = 1) -> None:
        if template not in self.openapi.doc["paths"] or not self.openapi.operation(
            template, method
        ):
            raise ValueError(f"{method} {template} is not a GitHub route")
        self.faults.inject(method, template, fault, times)

    def assert_no_violations(self) -> None:
        if self.violations:
            raise AssertionError(
                "requests GitHub would refuse:\n" + "\n".join(self.violations[:20])
            )

    # -- WSGI ------------------------------------------------------------------

    def wsgi(self, environ: dict[str, Any], start_response: Any) -> Any:
        with self.lock:
            self._in_flight += 1
        try:
            return self._wsgi(environ, start_response)
        finally:
            with self.lock:
                self._in_flight -= 1

    def idle(self, timeout: float = 30) -> None:
        """Wait until no request is being served (a delayed answer included)."""
        deadline = time.monotonic() + timeout
        while self._in_flight and time.monotonic() < deadline:
            time.sleep(0.02)

    def _wsgi(self, environ: dict[str, Any], start_response: Any) -> Any:
        from tests.fakegithub import app_registration

        request = Request(environ)
        path = request.path
        if path.startswith(API_PREFIX + "/") or path == API_PREFIX:
            response = self._api(request, path[len(API_PREFIX) :] or "/")
        elif path in ("/api/graphql", "/graphql"):
            from tests.fakegithub import graphql

            response = graphql.handle(self, request)
        elif path.startswith("/_storage/"):
            from tests.fakegithub import routes_actions

            response = routes_actions.storage(self, request)
        elif app_registration.is_form(path):
            response = app_registration.new_app_form(self, request)
        elif path.startswith("/_fake/"):
            from tests.fakegithub import controls

            response = controls.handle(self, request)
        elif ".git/" in path:
            from tests.fakegithub import githttp

            response = githttp.handle(self, request)
        else:
            response = Response("Not Found", 404)
        return response(environ, start_response)

    def _violation(self, text: str) -> None:
        with self.lock:
            self.violations.append(text)

    def record_violation(self, text: str) -> None:
        """A request GitHub would refuse, from a handler outside the REST path."""
        self._violation(text)

    def log_request(self, method: str, path: str, query: Any, status: int, body: Any) -> None:
        """Log a request served outside the REST path (GraphQL), as REST ones are."""
        self._log(method, path, query, status, body)

    def _api(self, request: Request, path: str) -> Response:
        from tests.fakegithub import (  # noqa: F401
            app_registration,
            moves,
            routes,
            routes_actions,
            routes_protection,
            routes_pulls,
        )
        from tests.fakegithub.paging import by_id

        # The `Link` header's form: GitHub names pages by repository id (paging.py).
        path = by_id(self, path)
        method = request.method.upper()
        query = {
            k: v[0] if len(v) == 1 else v
            for k, v in parse_qs(request.query_string.decode()).items()
        }
        requested = path
        moved = moves.redirect(self, method, path, request.query_string.decode())
        if moved is not None:  # an old name: GitHub redirects (moves.py)
            status, reply_body, location = moved
            self._log(method, requested, query, status, None)
            return Response(
                json.dumps(reply_body),
                status,
                {"Location": location, "x-github-request-id": secrets.token_hex(8)},
                content_type="application/json; charset=utf-8",
            )
        path = moves.current_path(self, path)
        raw = request.get_data()
        body: Any = None
        matched: tuple[str, dict[str, str]] | None = None
        fault: Fault | None = None
        status = 500
        reply_body: Any = None
        try:
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError:
                    raise self._refuse(method, path, "the body is not JSON") from None
            matched = self.openapi.match(path)
            if matched is None:
                raise self._refuse(method, path, "no such route in GitHub's OpenAPI description")
            template, params = matched
            if self.openapi.operation(template, method) is None:
                raise self._refuse(method, path, f"{template} does not take {method}")
            problems = self.openapi.body_errors(template, method, body)
            if problems:
                raise self._refuse(method, path, "invalid body: " + "; ".join(problems))
            fault = self.faults.take(method, template)
            if fault is not None and fault.status and not fault.after:
                raise Reply(fault.status, fault.body, fault.headers)
            handler = ROUTES.get((method, template))
            if handler is None:
                raise self._refuse(method, path, f"the fake does not implement {template}")
            headers = {k.lower(): v for k, v in request.headers.items()}
            call = Call(method, path, template, params, query, body, None, headers)
            call.token = self._authenticate(call)
            reply = handler(self, call)
            if fault is not None and fault.after:
                # The write happened; the answer is lost (GitHub's 500 after merging).
                reply = Reply(fault.status, fault.body, fault.headers)
        except Reply as exc:
            reply = exc
        status, reply_body = reply.status, reply.body
        headers = dict(reply.headers)
        if (
            self.validate_responses
            and matched is not None
            and 200 <= status < 300
            and reply_body is not None
        ):
            problems = self.openapi.response_errors(matched[0], method, status, reply_body)
            if problems:
                self._violation(
                    f"{method} {path}: the fake's {status} answer does not match GitHub's "
                    "description: " + "; ".join(problems)
                )
        text = "" if reply_body is None else json.dumps(reply_body)
        if method == "GET" and status == 200:
            etag = 'W/"' + str(abs(hash(text))) + '"'
            headers["ETag"] = etag
            if request.headers.get("If-None-Match") == etag:
                status, text = 304, ""
        self._log(method, requested, query, status, body)
        late(fault)
        headers.setdefault("x-ratelimit-limit", "5000")
        headers.setdefault("x-ratelimit-remaining", "4999")
        headers["x-github-request-id"] = secrets.token_hex(8)
        return Response(text, status, headers, content_type="application/json; charset=utf-8")

    def _refuse(self, method: str, path: str, reason: str) -> Reply:
        self._violation(f"{method} {path}: {reason}")
        return error(422, f"fake GitHub refused the request: {reason}")

    def _log(self, method: str, path: str, query: Any, status: int, body: Any) -> None:
        entry = {"method": method, "path": path, "query": query, "status": status, "body": body}
        with self.lock:
            self.requests.append(entry)
            target = os.environ.get("ODW_FAKE_GITHUB_REQUEST_LOG")
            if target:
                with Path(target).open("a", encoding="utf-8") as fh:
                    fh.write(json.dumps(entry) + "\n")

    # -- auth ------------------------------------------------------------------

    def _authenticate(self, call: Call) -> s.Token | None:
        header = call.headers.get("authorization", "")
        scheme, _, credential = header.partition(" ")
        if call.template in OPEN_ROUTES:
            return None
        if call.template in JWT_ROUTES or call.template == TOKEN_ROUTE:
            if scheme.lower() != "bearer":
                raise error(401, "A JSON web token could not be decoded")
            self._verify_jwt(credential)
            return None
        token = self.tokens.get(credential) if scheme.lower() in ("token", "bearer") else None
        if token is None or token.expires_at <= self.now():
            raise error(401, "Bad credentials")
        owner, repo = call.params.get("owner"), call.params.get("repo")
        if owner and repo:
            full = f"{owner}/{repo}"
            installation = self.installations[token.installation_id]
            allowed = token.repositories or installation.repositories
            if full not in self.repos or full not in allowed:
                raise error(404, "Not Found")
            needed = _needed_permission(call.template, call.method)
            if needed and not _grants(token.permissions, needed):
                raise error(403, "Resource not accessible by integration")
        return token

    def _verify_jwt(self, credential: str) -> None:
        try:
            claims = jwt.decode(
                credential,
                self._public_key,
                algorithms=["RS256"],
                options={
                    "verify_exp": False,
                    "verify_iat": False,
                    "require": ["iat", "exp", "iss"],
                },
            )
        except jwt.PyJWTError as exc:
            raise error(401, f"A JSON web token could not be decoded: {exc}") from None
        now = self.now()
        if str(claims["iss"]) != str(self.app_id):
            raise error(401, "'Issuer' claim ('iss') must be the App's id")
        if claims["exp"] - claims["iat"] > 600:
            raise error(401, "'Expiration time' claim ('exp') is too far in the future")
        if claims["exp"] <= now:
            raise error(401, "'Expiration time' claim ('exp') must be in the future")
        if claims["iat"] > now + 1:
            raise error(401, "'Issued at' claim ('iat') must be an Integer in the past")

    def mint_token(
        self,
        installation: s.Installation,
        repositories: list[str] | None,
        permissions: dict[str, str],
    ) -> s.Token:
        token = s.Token(
            "ghs_" + secrets.token_hex(18),
            installation.id,
            repositories,
            permissions,
            self.now() + TOKEN_LIFETIME,
        )
        with self.lock:
            self.tokens[token.token] = token
            self.issued.append(token.token)
        return token

    def token_for_git(self, basic: str) -> s.Token | None:
        token = self.tokens.get(basic)
        return token if token and token.expires_at > self.now() else None


@cache
def _app_key() -> rsa.RSAPrivateKey:
    """One App key per test process: generating RSA keys is slow."""
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class _QuietHandler(WSGIRequestHandler):
    def log(self, type: str, message: str, *args: Any) -> None:
        return None


LEVELS = {"read": 1, "write": 2, "admin": 3}


def _grants(have: dict[str, str], needed: tuple[tuple[str, ...], str]) -> bool:
    names, level = needed
    return any(LEVELS.get(have.get(name, ""), 0) >= LEVELS[level] for name in names)


def _needed_permission(template: str, method: str) -> tuple[tuple[str, ...], str] | None:
    level = "read" if method == "GET" else "write"
    if "/protection" in template:
        return ("administration",), level
    if "/statuses" in template:
        return ("statuses",), level
    if "/check-runs" in template or "/check-suites" in template:
        return ("checks",), level
    if "/issues" in template:
        return ("issues", "pull_requests"), level
    if template.endswith("/merge"):
        return ("contents",), level
    if "/pulls" in template:
        return ("pull_requests",), level
    if "/contents/" in template or "/git/" in template:
        return ("contents",), level
    if "/actions/" in template:
        return ("actions",), level
    if "/collaborators/" in template:
        return ("metadata",), "read"
    return None
