"""Signed webhooks from the fake, shaped like GitHub's published examples
(`@octokit/webhooks-examples`): each payload is the example for its event and
action with the fake's state written over it, so it validates against
`@octokit/webhooks-schemas` as GitHub's own deliveries do."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import queue
import threading
import uuid
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import requests

from tests.fakegithub import state as s
from tests.fakegithub.completion import complete
from tests.fakegithub.oracles import WEBHOOK_EXAMPLES
from tests.fakegithub.shapes import _rewrite_repos, iso

if TYPE_CHECKING:
    from tests.fakegithub.server import FakeGitHub

# Events whose example for this action is missing use another action's example.
FALLBACK = {
    ("workflow_run", "in_progress"): "requested",
    ("pull_request", "edited"): "opened",
}


@cache
def _examples(path: Path) -> dict[tuple[str, str | None], dict[str, Any]]:
    if not path.is_file():
        return {}
    found: dict[tuple[str, str | None], dict[str, Any]] = {}
    for entry in json.loads(path.read_text(encoding="utf-8")):
        for example in entry["examples"]:
            found.setdefault((entry["name"], example.get("action")), example)
    return found


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class Webhooks:
    def __init__(self, fake: FakeGitHub, url: str | None, secret: str) -> None:
        self.fake = fake
        self.url = url
        self.secret = secret
        self.deliveries: list[s.Delivery] = []  # in the order the events happened
        self.delivered: list[s.Delivery] = []  # in the order they reached the receiver
        self._drop = 0
        self._duplicate = 0
        self._late: dict[tuple[str, str | None], int] = {}  # (event, action) -> how many
        self._held: dict[str, list[s.Delivery]] = {}  # event -> deliveries held back
        self._queue: queue.Queue[s.Delivery | None] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._receivers: list[str] = []  # several: taken in turn, as a load balancer does
        self._turn = 0
        self._again: set[str] = set()  # ids queued for redelivery, not sent yet

    # -- faults ----------------------------------------------------------------

    def drop_next(self, n: int = 1) -> None:
        self._drop += n

    def duplicate_next(self, n: int = 1) -> None:
        self._duplicate += n

    def deliver_late(self, event: str, action: str | None, n: int = 1) -> None:
        """Hold the next `n` deliveries of `event`/`action` back until the next
        delivery of the same event has been sent, so `completed` reaches the App
        before `in_progress`. GitHub does not promise order: "GitHub may deliver
        webhooks in a different order than the order in which the events took
        place" (https://docs.github.com/en/webhooks/testing-and-troubleshooting-webhooks/troubleshooting-webhooks#webhooks-deliveries-are-out-of-order),
        seen as `queued, completed, in_progress` for workflow_job
        (https://github.com/google/go-github/issues/2706)."""
        key = (event, action)
        self._late[key] = self._late.get(key, 0) + n

    # -- delivery -------------------------------------------------------------

    def receivers(self, urls: list[str]) -> None:
        """Deliver to `urls` in turn, as a load balancer in front of several
        `odw serve` would; one that refuses the connection (down) is skipped
        and the next one tried. Replaces `url` while set."""
        with self.fake.lock:
            self._receivers = list(urls)
            self._turn = 0

    def redeliver_failed(self) -> int:
        """Send again every delivery whose last attempt got no 2xx answer; how many.

        GitHub keeps each delivery and its answer, and lets the owner redeliver
        the failed ones, with the same `X-GitHub-Delivery` GUID
        (https://docs.github.com/en/webhooks/testing-and-troubleshooting-webhooks/redelivering-webhooks).
        One already waiting to be sent again is not queued twice.
        """
        with self.fake.lock:
            failed = {
                d.id: d
                for d in self.delivered
                if d.status is not None and not 200 <= d.status < 300 and d.id not in self._again
            }
            self._again |= failed.keys()
        for delivery in failed.values():
            self._queue.put(delivery)
        return len(failed)

    def _targets(self) -> list[str]:
        with self.fake.lock:
            if not self._receivers:
                return [self.url] if self.url else []
            turn = self._turn % len(self._receivers)
            self._turn += 1
            return self._receivers[turn:] + self._receivers[:turn]

    def start(self) -> None:
        self._thread = threading.Thread(target=self._deliver_all, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._queue.put(None)
        if self._thread:
            self._thread.join(timeout=10)

    def flush(self, timeout: float = 30) -> None:
        """Wait until every queued delivery was sent."""
        done = threading.Event()
        marker = s.Delivery("flush", "", None, {})
        marker.payload = {"_flush": done}
        self._queue.put(marker)
        done.wait(timeout)

    def send(self, event: str, action: str | None, **objects: Any) -> s.Delivery:
        payload = self.payload(event, action, **objects)
        delivery = s.Delivery(str(uuid.uuid4()), event, action, payload)
        with self.fake.lock:
            self.deliveries.append(delivery)
            if self._drop:
                self._drop -= 1
                delivery.dropped = True
                return delivery
            copies = 2 if self._duplicate else 1
            self._duplicate = max(0, self._duplicate - 1)
            key = (event, action)
            if self._late.get(key):
                self._late[key] -= 1
                self._held.setdefault(event, []).append(delivery)
                return delivery
            released = self._held.pop(event, [])
        if self.url or self._receivers:
            for _ in range(copies):
                self._queue.put(delivery)
            for late in released:
                self._queue.put(late)
        return delivery

    def _deliver_all(self) -> None:
        while True:
            delivery = self._queue.get()
            if delivery is None:
                return
            if "_flush" in delivery.payload:
                delivery.payload["_flush"].set()
                continue
            with self.fake.lock:
                self._again.discard(delivery.id)
            self.delivered.append(delivery)
            body = json.dumps(delivery.payload).encode()
            headers = {
                "Content-Type": "application/json",
                "User-Agent": "GitHub-Hookshot/fake",
                "X-GitHub-Event": delivery.event,
                "X-GitHub-Delivery": delivery.id,
                "X-GitHub-Hook-ID": "1",
                "X-GitHub-Hook-Installation-Target-Type": "integration",
                "X-GitHub-Hook-Installation-Target-ID": str(self.fake.app_id),
                "X-Hub-Signature": "sha1="
                + hmac.new(self.secret.encode(), body, hashlib.sha1).hexdigest(),
                "X-Hub-Signature-256": sign(self.secret, body),
            }
            delivery.status = 0  # no receiver answered (GitHub's "failed to connect")
            for url in self._targets():
                try:
                    answer = requests.post(url, data=body, headers=headers, timeout=10)
                except requests.RequestException as exc:
                    if _refused(exc):
                        continue
                    break
                delivery.status = answer.status_code
                delivery.answers.append(answer.text)
                break

    # -- payloads ---------------------------------------------------------------

    def payload(self, event: str, action: str | None, **objects: Any) -> dict[str, Any]:
        examples = _examples(WEBHOOK_EXAMPLES)
        key = (event, FALLBACK.get((event, action), action))
        template = examples.get(key)
        data: dict[str, Any] = json.loads(self._rebase(json.dumps(template))) if template else {}
        if action is not None:
            data["action"] = action
        build = getattr(self, f"_{event}")
        repo = build(data, **objects)
        if repo is not None:
            if "repository" in data:
                _rewrite_repos(data["repository"], repo, self.fake)
            else:
                data["repository"] = self.fake.shapes.repository(repo)
            installation = repo.installation_id
        else:
            installation = data.get("installation", {}).get("id")
        if installation is not None and event != "installation":
            data["installation"] = {"id": installation, "node_id": f"I_{installation}"}
        if "sender" in data or not template:
            login = objects.get("sender") or self.fake.bot_login
            kind = "Bot" if login.endswith("[bot]") else "User"
            data["sender"] = _user(data.get("sender"), self.fake.shapes.user(login, kind))
        complete(event, action, data)
        return data

    def _rebase(self, text: str) -> str:
        fake = self.fake
        text = text.replace("https://api.github.com", fake.api_url)
        text = text.replace("https://uploads.github.com", fake.host_url)
        text = text.replace("https://github.com", fake.host_url)
        return text.replace("http://github.com", fake.host_url)

    def _installation(self, data: dict[str, Any], installation: s.Installation) -> None:
        body = data.setdefault("installation", {})
        body.update(id=installation.id, app_id=self.fake.app_id, app_slug=self.fake.app_slug)
        if isinstance(body.get("account"), dict):
            body["account"]["login"] = installation.account
        body["permissions"] = dict(installation.permissions)
        data["repositories"] = [
            {
                "id": self.fake.repos[name].id,
                "node_id": f"R_{self.fake.repos[name].id}",
                "name": name.split("/")[1],
                "full_name": name,
                "private": True,
            }
            for name in installation.repositories
        ]

    def _push(
        self, data: dict[str, Any], repo: s.Repository, ref: str, before: str, after: str
    ) -> s.Repository:
        zero = "0" * 40
        data.update(
            ref=ref,
            before=before,
            after=after,
            created=before == zero,
            deleted=after == zero,
            forced=before != zero and after != zero and not repo.git.is_ancestor(before, after),
            base_ref=None,
            compare=f"{self.fake.host_url}/{repo.full_name}/compare/{before[:12]}...{after[:12]}",
        )
        head = data.get("head_commit")
        if after == zero or head is None:
            data["head_commit"] = None
            data["commits"] = []
        else:
            head = copy.deepcopy(head)
            head.update(
                id=after,
                tree_id=repo.git.git("rev-parse", f"{after}^{{tree}}"),
                message=repo.git.git("log", "-1", "--format=%B", after),
                url=f"{self.fake.host_url}/{repo.full_name}/commit/{after}",
            )
            data["head_commit"] = head
            data["commits"] = [head]
        return repo

    def _pull_request(
        self, data: dict[str, Any], pull: s.PullRequest, sender: str | None = None
    ) -> s.Repository:
        repo = self.fake.repos[pull.repo]
        data["number"] = pull.number
        rendered = self.fake.shapes.pull(pull)
        body = data.get("pull_request", {})
        for key in (
            "id",
            "node_id",
            "number",
            "state",
            "title",
            "body",
            "draft",
            "merged",
            "url",
            "html_url",
            "issue_url",
            "comments_url",
            "merge_commit_sha",
            "merged_at",
            "closed_at",
            "created_at",
            "updated_at",
        ):
            if key in rendered:
                body[key] = rendered[key]
        for side in ("head", "base"):
            body.setdefault(side, {}).update(
                ref=rendered[side]["ref"], sha=rendered[side]["sha"], label=rendered[side]["label"]
            )
            body[side]["user"] = _user(body[side].get("user"), rendered[side]["user"])
            if isinstance(body[side].get("repo"), dict):
                _rewrite_repos(body[side]["repo"], repo, self.fake)
        if pull.head_repo and isinstance(body["head"].get("repo"), dict):
            # A fork's pull request: its head lives in the fork (as GitHub sends it).
            body["head"]["repo"] = self.fake.shapes.fork_of(
                body["head"]["repo"], repo, pull.head_repo
            )
        body["user"] = _user(body.get("user"), rendered["user"])
        if pull.merged:
            merger = self.fake.shapes.user(sender, "User") if sender else rendered["merged_by"]
            body["merged_by"] = _user(body.get("user"), merger)
        data["pull_request"] = body
        if data.get("action") == "edited":
            data["changes"] = {}
        return repo

    def _issue_comment(self, data: dict[str, Any], comment: s.Comment) -> s.Repository:
        repo = self.fake.repos[comment.repo]
        rendered = self.fake.shapes.comment(comment)
        body = data.get("comment", {})
        for key in (
            "id",
            "node_id",
            "body",
            "url",
            "html_url",
            "issue_url",
            "created_at",
            "updated_at",
            "author_association",
        ):
            body[key] = rendered[key]
        body["user"] = _user(body.get("user"), rendered["user"])
        data["comment"] = body
        issue = data.get("issue", {})
        issue.update(
            number=comment.number,
            url=f"{self.fake.api_url}/repos/{repo.full_name}/issues/{comment.number}",
            html_url=f"{self.fake.host_url}/{repo.full_name}/issues/{comment.number}",
        )
        pull = self.fake.pulls.get((repo.full_name, comment.number))
        if pull is not None:
            issue["title"] = pull.title
            issue["pull_request"] = {
                "url": f"{self.fake.api_url}/repos/{repo.full_name}/pulls/{pull.number}",
                "html_url": f"{self.fake.host_url}/{repo.full_name}/pull/{pull.number}",
                "diff_url": f"{self.fake.host_url}/{repo.full_name}/pull/{pull.number}.diff",
                "patch_url": f"{self.fake.host_url}/{repo.full_name}/pull/{pull.number}.patch",
                "merged_at": None,
            }
        else:
            issue.pop("pull_request", None)
        data["issue"] = issue
        if data.get("action") == "edited":
            data["changes"] = {}
        data["sender"] = _user(data.get("sender"), rendered["user"])
        return repo

    def _check_run(
        self,
        data: dict[str, Any],
        check_run: s.CheckRun,
        identifier: str | None = None,
        sender: str | None = None,
    ) -> s.Repository:
        repo = self.fake.repos[check_run.repo]
        rendered = self.fake.shapes.check_run(check_run)
        body = data.get("check_run", {})
        for key in (
            "id",
            "node_id",
            "name",
            "head_sha",
            "external_id",
            "url",
            "html_url",
            "details_url",
            "status",
            "conclusion",
            "started_at",
            "completed_at",
        ):
            body[key] = rendered[key]
        body["details_url"] = rendered["details_url"] or rendered["html_url"]
        out = body.get("output", {})
        out.update(
            title=rendered["output"]["title"],
            summary=rendered["output"]["summary"],
            text=rendered["output"]["text"],
        )
        body["output"] = out
        if isinstance(body.get("app"), dict):
            # The App that created the check run, as `check_run.app` says on GitHub.
            app = rendered["app"]
            body["app"].update(id=app["id"], slug=app["slug"], name=app["name"])
        if isinstance(body.get("check_suite"), dict):
            body["check_suite"].update(head_sha=check_run.head_sha)
        body["pull_requests"] = []
        data["check_run"] = body
        if identifier is not None:
            data["requested_action"] = {"identifier": identifier}
        return repo

    def _workflow_run(self, data: dict[str, Any], run: s.WorkflowRun) -> s.Repository:
        repo = self.fake.repos[run.repo]
        rendered = self.fake.shapes.workflow_run(run)
        body = data.get("workflow_run", {})
        for key in (
            "id",
            "name",
            "node_id",
            "head_branch",
            "head_sha",
            "path",
            "run_number",
            "event",
            "display_title",
            "status",
            "conclusion",
            "workflow_id",
            "url",
            "html_url",
            "jobs_url",
            "logs_url",
            "artifacts_url",
            "cancel_url",
            "rerun_url",
            "created_at",
            "updated_at",
            "run_attempt",
            "run_started_at",
            "previous_attempt_url",
        ):
            body[key] = rendered[key]
        body["pull_requests"] = []
        for side in ("repository", "head_repository"):
            if isinstance(body.get(side), dict):
                _rewrite_repos(body[side], repo, self.fake)
        if isinstance(body.get("head_repository"), dict):
            for key in ("id", "name", "full_name"):
                body["head_repository"][key] = rendered["head_repository"][key]
            body["head_repository"]["owner"]["login"] = rendered["head_repository"]["owner"][
                "login"
            ]
        body["actor"] = _user(body.get("actor"), rendered["actor"])
        body["triggering_actor"] = _user(body.get("triggering_actor"), rendered["triggering_actor"])
        if run.status == "completed":
            body.setdefault("conclusion", run.conclusion)
        data["workflow_run"] = body
        workflow = data.get("workflow", {})
        workflow.update(
            id=run.workflow_id,
            name=run.name,
            path=f".github/workflows/{run.workflow}",
            url=f"{self.fake.api_url}/repos/{repo.full_name}/actions/workflows/{run.workflow_id}",
        )
        data["workflow"] = workflow
        return repo

    def _workflow_job(self, data: dict[str, Any], run: s.WorkflowRun, job: s.Job) -> s.Repository:
        repo = self.fake.repos[run.repo]
        rendered = self.fake.shapes.job(run, job)
        body = data.get("workflow_job", {})
        for key in (
            "id",
            "run_id",
            "run_attempt",
            "name",
            "workflow_name",
            "head_branch",
            "head_sha",
            "status",
            "conclusion",
            "node_id",
            "url",
            "html_url",
            "run_url",
            "check_run_url",
            "created_at",
            "started_at",
            "completed_at",
        ):
            body[key] = rendered[key]
        if job.status == "completed":
            body.setdefault("steps", [])
        data["workflow_job"] = body
        return repo


def _refused(exc: BaseException) -> bool:
    """Whether the receiver refused the connection (nothing listens): the
    request never reached it, so another receiver may take it."""
    todo: list[object] = [exc]
    seen: set[int] = set()
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, ConnectionRefusedError):
            return True
        if isinstance(item, BaseException):
            todo.extend(
                [*item.args, item.__cause__, item.__context__, getattr(item, "reason", None)]
            )
    return False


def _user(template: Any, ours: dict[str, Any]) -> dict[str, Any]:
    """Our user written over the example's (keeping the example's shape)."""
    base = dict(template) if isinstance(template, dict) else {}
    for key, value in ours.items():
        if key in base or not template:
            base[key] = value
    return base


__all__ = ["Webhooks", "iso", "sign"]
