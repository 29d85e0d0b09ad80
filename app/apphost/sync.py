"""Bring a run's GitHub views up to date with its state: checks, PRs, status comments.

Run after every decide step (an `app-views` outbox entry) and by the
reconciler, by the one executor holding the run's lease (`app-run:<run id>`),
and every save is fenced by that hold. Idempotent and cheap when nothing
changed: each view's digest is kept with its GitHub id in `run_tasks` (task
"" is the run), and a view is written only when its digest moved. Ids are
saved right after each create, so a crash repeats at most a lookup (the newest
check run by `external_id`, the comment by its hidden marker), never a second
check run or comment. A completed check run is never reopened: a retried task
or a resumed run gets a new one.

Progress edits are few: a check run in progress is edited when its title
(stage, attempt) changes, not for what moves within a stage; and a check run
or status comment in progress is edited `SETTLE` seconds after a change is
first seen and at most once per `EDIT_EVERY` seconds (GitHub notifies nobody
of an edit, and a stage's end and the next stage's dispatch a second apart
would otherwise cost two). A held edit leaves `later` set, and the performer
queues the next sync for then. Creating a view and concluding one are never
held. A landing's writes (comment, PR, checks) go as one request
(`app/github/landing_writes.py`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from app.apphost import pr_landing, views
from app.apphost.judged import Judged
from app.core.state import RunState, TaskState
from app.core.verdict import Verdict
from app.github.errors import Forbidden, GitHubError, NotFound, Unprocessable
from app.github.landing_writes import LandingWrites
from app.github.protocols import CheckRunFields, Checks, Comments, Pulls
from app.store import Hold, Store

log = logging.getLogger("odw.apphost")

RUN = ""  # run_tasks row of the run itself
EXECUTOR_NOTES = frozenset({"jobUrl", "branch"})
# Seconds between two progress edits of one check run or comment (GITHUB-UX:
# debounce edits, at most every ~10 s per comment).
EDIT_EVERY = 10.0
# Seconds a progress change waits before it is shown, so a change that follows
# within seconds (an integration's fetch, rebase and push, then the landing) is
# one write, not two back to back. Stages take minutes: nobody sees the wait.
SETTLE = 5.0


class ViewGitHub(Protocol):
    """What a view sync uses of one repository (a `RepositoryClient` is one)."""

    @property
    def checks(self) -> Checks: ...
    @property
    def pulls(self) -> Pulls: ...
    @property
    def comments(self) -> Comments: ...
    def land_views(self, writes: LandingWrites) -> int: ...


@dataclass
class ViewSync:
    store: Store
    client: ViewGitHub
    run_id: str
    base_sha: str
    bot_login: str
    repository_url: str = ""
    details_url: str | None = None
    # A sync taken over from an executor that died mid-way: what it may have
    # created without saving is looked up first (check by external id, comment
    # by marker), so nothing is created twice.
    again: bool = False
    # Who a notice mentions when a person must act (`odw.yml`'s `notify`, else
    # who started the run); nobody: the notice is still posted, mentioning no one.
    mention: tuple[str, ...] = ()
    # The run's lease this sync holds (`performers/views.py`): every save is
    # fenced by it, so a syncer that stalled past the lease, while another
    # took the run over, stops at its next save instead of overwriting
    # what its successor recorded.
    hold: Hold | None = None
    # Each task's newest verdict and its stages' seconds, from the run's log
    # (`app/apphost/judged.py`), read by the performer with the state it syncs.
    judged: Judged = field(default_factory=Judged)
    # When a held progress edit may be made (None: nothing held).
    later: float | None = field(default=None, init=False)
    # A landed task's status comment body, left for the request that closes its PR.
    _last_comment: str | None = field(default=None, init=False)
    # This sync's landing writes, sent as one request at its end, and what is
    # saved once they are done (`app/github/landing_writes.py`).
    _writes: LandingWrites = field(default_factory=LandingWrites, init=False)
    _after: list[Callable[[], None]] = field(default_factory=list, init=False)
    _landing: set[str] = field(default_factory=set, init=False)  # tasks closing in one
    _repo_node: str = field(default="", init=False)

    def _held(self, h: dict[str, Any], slot: str, task: str) -> bool:
        """Whether a progress edit of `slot` waits: until `SETTLE` after the
        change was first seen (what follows at once, a stage's next dispatch or
        a landing, is shown by the same edit) and `EDIT_EVERY` after the last
        write. A held edit sets `later` to when it may be made."""
        now = self.store.clock()
        seen = h.get(f"{slot}SeenAt")
        if seen is None:
            seen = h[f"{slot}SeenAt"] = now
            self._save(task, h)
        due = max(float(seen) + SETTLE, float(h.get(f"{slot}EditedAt") or 0.0) + EDIT_EVERY)
        if now >= due:
            return False
        self.later = due if self.later is None else min(self.later, due)
        return True

    def _edited(self, h: dict[str, Any], slot: str) -> None:
        h[f"{slot}EditedAt"] = self.store.clock()
        h.pop(f"{slot}SeenAt", None)

    def sync(self, s: RunState) -> None:
        handles = self.store.projections.tasks(self.run_id)
        self._writes, self._after, self._landing = LandingWrites(), [], set()
        self._repo_node = next(
            (str(v["repoNode"]) for v in handles.values() if v.get("repoNode")), ""
        )
        links = self._links(handles)
        for t in s.tasks.values():
            if not _shown(t):
                continue
            h = handles.setdefault(t.id, {})
            if self._closes_in_one(t, h):
                self._landing.add(t.id)
            latest = self.judged.latest.get(t.id)
            self._pull(s, t, h, latest)
            links = self._links(handles)
            self._task_check(s, t, h, links, latest)
            links = self._links(handles)
            self._assessment(s, t, h)
            self._last_comment = None
            self._comment(s, t, h, links, latest)
            self._notice(s, t, h, links, latest)
            self._close(s, t, h)
        run = handles.setdefault(RUN, {})
        self._check(
            run, "run", views.run_check(s, self._links(handles)), base_head(s, self.base_sha)
        )
        if self._writes.parts:
            self.client.land_views(self._writes)
            for done in self._after:
                done()
        self._halt_notice(s, handles)

    # -- pieces ----------------------------------------------------------------

    def _links(self, handles: dict[str, dict[str, Any]]) -> views.Links:
        return views.Links(
            pulls={k: v["pullUrl"] for k, v in handles.items() if v.get("pullUrl")},
            checks={k: v["checkUrl"] for k, v in handles.items() if v.get("checkUrl")},
            jobs={k: v["jobUrl"] for k, v in handles.items() if v.get("jobUrl")},
            stage_jobs={
                k: {n.removeprefix("job:"): u for n, u in v.items() if n.startswith("job:") and u}
                for k, v in handles.items()
            },
            times=self.judged.times,
            repository_url=self.repository_url,
            notice=pr_landing.notice(handles),
        )

    def _save(self, task: str, h: dict[str, Any]) -> None:
        """Save what the sync owns; the executor's notes (job URL, branch) stay as stored."""
        mine = {k: v for k, v in h.items() if not _executor_note(k)}
        with self.store.transaction() as tx:
            if self.hold is not None:
                self.store.leases.fence(self.hold, tx=tx)
            saved = self.store.projections.merge_task(self.run_id, task, mine, tx=tx)
        h.update({k: v for k, v in saved.items() if _executor_note(k)})

    def _check(
        self, h: dict[str, Any], slot: str, view: views.CheckView, head_sha: str, task: str = RUN
    ) -> None:
        """Create the check run on `head_sha`, or update it.

        A new head gets a new check run, and so does a completed one whose
        status or conclusion would move (a retried task, a resumed run): GitHub
        never takes a completed check run back to `in_progress`, nor changes
        its conclusion (`tests/fakegithub/checkruns.py` cites where). The old
        one stays as it ended; the new one has the same name and external id,
        so its buttons work and `Links.checks` points to it.
        """
        digest = view.digest()
        if h.get(f"{slot}Digest") == digest and h.get(f"{slot}Head") == head_sha:
            return
        if self._unsure(h, slot):
            self._adopt(h, slot, view, head_sha)
        existing = int(h[f"{slot}Id"]) if h.get(f"{slot}Id") else None
        same_head = h.get(f"{slot}Head") == head_sha
        completed = bool(h.get(f"{slot}Done"))
        reopen = completed and h.get(f"{slot}Conclusion") != view.conclusion
        if existing is not None and same_head and not reopen:
            # Still running, or completed as the view says: a completed run's
            # status and conclusion are never sent again, only what it shows.
            concludes = not completed and view.conclusion is not None
            if not completed and not concludes and view.title == h.get(f"{slot}Title"):
                # In progress, and its title (stage, attempt) stands: what moved
                # within the stage (a lane's verdict, a job link) rides along
                # with the next title change or the conclusion.
                return
            if not concludes and self._held(h, slot, task):
                return
            fields = self._fields(view, with_status=not completed)
            node = str(h.get(f"{slot}Node") or "")
            if concludes and task in self._landing and node and self._repo_node:
                # Concluded by the landing's one request; recorded once it is done.
                self._writes.update_check(
                    self._repo_node, node, fields,
                    lambda: self.client.checks.update_check_run(existing, fields),
                )  # fmt: skip
                self._after.append(lambda: self._record(h, slot, view, head_sha, task))
                return
            run = self.client.checks.update_check_run(existing, fields)
        else:
            fields = self._fields(view, with_status=True)
            self._creating(h, slot, task)
            run = self.client.checks.create_check_run(
                view.name, head_sha, fields, replacing=existing if same_head else None
            )
            if existing is not None and not same_head and not completed and slot == "run":
                # The base moved (a task landed): the run check follows it to the
                # base's new head, and the old one is concluded there, never left
                # spinning. A task's check on an older branch head is left as it
                # is: GitHub shows only the head commit's checks on the pull
                # request, so a cancel would cost a request nobody sees.
                old = views.superseded_check(view.name, head_sha)
                ended = CheckRunFields(
                    status=old.status,
                    conclusion=old.conclusion,
                    title=old.title,
                    summary=old.summary,
                )
                node = str(h.get(f"{slot}Node") or "")
                if self._writes.parts and node and self._repo_node:  # a landing moved it
                    self._writes.update_check(
                        self._repo_node, node, ended,
                        lambda: self.client.checks.update_check_run(existing, ended),
                    )  # fmt: skip
                else:
                    self.client.checks.update_check_run(existing, ended)
            h[f"{slot}Node"] = run.node_id
        h[f"{slot}Id"] = run.id
        if slot == "check" and run.html_url:
            h["checkUrl"] = run.html_url
        if slot == "run" and run.html_url:
            h["runUrl"] = run.html_url  # the run check, linked from command replies
        self._record(h, slot, view, head_sha, task)

    def _record(
        self, h: dict[str, Any], slot: str, view: views.CheckView, head_sha: str, task: str
    ) -> None:
        """Save what the check run now shows, so the next sync writes only a change."""
        h[f"{slot}Head"], h[f"{slot}Digest"] = head_sha, view.digest()
        h[f"{slot}Title"] = view.title
        h[f"{slot}Done"] = view.conclusion is not None
        h[f"{slot}Conclusion"] = view.conclusion
        h[f"{slot}Creating"] = False
        self._edited(h, slot)
        self._save(task, h)

    def _unsure(self, h: dict[str, Any], what: str) -> bool:
        """Whether `what` may exist unrecorded: this sync was taken over
        (`again`), or an earlier one said it was creating `what` and never
        saved what it made (it died, or lost the run, between the request and
        the save). Then `what` is looked up before anything is created."""
        return self.again or bool(h.get(f"{what}Creating"))

    def _creating(self, h: dict[str, Any], what: str, task: str) -> None:
        """Record, before the request, that `what` is being created: whoever
        syncs the run next, in any process, looks it up first (`_unsure`)
        unless this sync saved it, so a crash in between never makes two."""
        h[f"{what}Creating"] = True
        self._save(task, h)

    def _fields(self, view: views.CheckView, *, with_status: bool) -> CheckRunFields:
        return CheckRunFields(
            status=view.status if with_status else None,
            conclusion=view.conclusion if with_status else None,
            title=view.title,
            summary=view.summary,
            text=view.text,
            external_id=view.external_id,
            details_url=view.details_url or self.details_url,
            actions=view.actions,
        )

    def _adopt(self, h: dict[str, Any], slot: str, view: views.CheckView, head_sha: str) -> None:
        """Taken over from an executor that died: a check run it created on
        `head_sha` without saving its id (a new head's, or a completed one's
        successor) is the newest of that name there with the view's external id."""
        latest = [
            c
            for c in self.client.checks.check_runs_for_ref(head_sha, name=view.name)
            if c.external_id == view.external_id
        ]
        found = max(latest, key=lambda c: c.id, default=None)  # ids only grow
        if found is None or found.id == h.get(f"{slot}Id"):
            return
        h[f"{slot}Id"], h[f"{slot}Head"] = found.id, head_sha
        h[f"{slot}Done"] = found.status == "completed"
        h[f"{slot}Conclusion"] = found.conclusion

    def _head(self, s: RunState, h: dict[str, Any], latest: Verdict | None) -> str | None:
        """The task branch's head, once it has a commit of its own; never a base commit.

        A new branch starts at the base's head, and a stage that committed
        nothing leaves it there: until the branch has its own commit the task
        is shown on the run check only, so no task check sits on `main`.
        """
        bases = base_commits(s, self.base_sha)
        for head in (latest.head_after if latest is not None else None, h.get("checkHead")):
            if head and str(head) not in bases:
                return str(head)
        return None

    def _task_check(
        self,
        s: RunState,
        t: TaskState,
        h: dict[str, Any],
        links: views.Links,
        latest: Verdict | None,
    ) -> None:
        head = self._head(s, h, latest)
        if head is not None:
            self._check(h, "check", views.task_check(s, t, links, latest), head, t.id)

    def _assessment(self, s: RunState, t: TaskState, h: dict[str, Any]) -> None:
        view = views.assessment_check(s, t)
        salvaged = t.salvage.sha if t.salvage and t.salvage.sha else None
        head = salvaged if salvaged not in base_commits(s, self.base_sha) else None
        head = head or self._head(s, h, None)
        if view is not None and head is not None:
            self._check(h, "assessment", view, head, t.id)

    def _pull(self, s: RunState, t: TaskState, h: dict[str, Any], latest: Verdict | None) -> None:
        """One draft PR per task, once its branch has commits; its body kept current."""
        plan = _plan_committed(t, latest)
        body = views.pull_body(s, t, plan)
        if h.get("pull"):
            if h.get("bodyDigest") != views.digest(body) and t.status != "landed":
                self.client.pulls.update_pull(int(h["pull"]), body=body)
                h["bodyDigest"] = views.digest(body)
                self._save(t.id, h)
            return
        if not t.branch_started or latest is None or (not latest.commits and not plan):
            return
        # Created without a look first, unless an executor died here mid-way:
        # one open already (ours, opened before a crash) is GitHub's 422, then found.
        found = self.client.pulls.find_pull(t.branch, s.base) if self.again else None
        if found is None:
            try:
                found = self.client.pulls.create_pull(
                    t.branch, s.base, views.pull_title(s, t), body, draft=True
                )
            except Unprocessable as exc:  # no commits between the branch and the base yet
                found = None if self.again else self.client.pulls.find_pull(t.branch, s.base)
                if found is None:
                    log.info("no pull request for %s yet: %s", t.branch, exc)
                    return
                h["adopted"] = True  # opened before a crash: look for its comment
        else:
            h["adopted"] = True  # a PR we may have opened before a crash: look for its comment
        h["pull"], h["pullUrl"], h["bodyDigest"] = found.number, found.html_url, views.digest(body)
        h["pullNode"], h["repoNode"] = found.node_id, found.base_repo_node
        self._repo_node = self._repo_node or found.base_repo_node
        self._save(t.id, h)

    def _comment(
        self,
        s: RunState,
        t: TaskState,
        h: dict[str, Any],
        links: views.Links,
        latest: Verdict | None,
    ) -> None:
        if not h.get("pull"):
            return
        body = views.status_comment(s, t, links, latest, landed_note=t.status == "landed")
        digest = views.digest(body)
        if h.get("commentDigest") == digest:
            return
        if self._closes_in_one(t, h):
            self._last_comment = body  # the landing's one request carries it (`_close`)
            return
        if h.get("comment") and t.status == "running" and self._held(h, "comment", t.id):
            return
        number, comments = int(h["pull"]), self.client.comments
        if not h.get("comment") and (h.get("adopted") or self._unsure(h, "comment")):
            found = comments.find_marked_comment(number, views.marker(t.id), self.bot_login)
            if found is not None:
                h["comment"] = found.id
        if h.get("comment"):
            try:
                comments.edit_comment(int(h["comment"]), body)
            except NotFound:  # someone deleted it: recreate it once
                self._creating(h, "comment", t.id)
                created = comments.create_comment(number, body)
                h["comment"], h["commentNode"] = created.id, created.node_id
        else:
            self._creating(h, "comment", t.id)
            created = comments.create_comment(number, body)
            h["comment"], h["commentNode"] = created.id, created.node_id
        h["commentDigest"], h["commentCreating"] = digest, False
        self._edited(h, "comment")
        self._save(t.id, h)

    def _notice(
        self,
        s: RunState,
        t: TaskState,
        h: dict[str, Any],
        links: views.Links,
        latest: Verdict | None,
    ) -> None:
        """One new comment per stop that needs a person (a status comment's edit
        notifies nobody), posted once: its key is saved with the task's handles,
        and a sync taken over after a crash finds it by its marker first. The
        earlier notices on the pull request are then hidden as outdated."""
        key = views.notice_key(t)
        if key is None or not h.get("pull") or h.get("noticeKey") == key:
            return
        number, comments = int(h["pull"]), self.client.comments
        marker = views.notice_marker(t.id, key)
        unsure = self._unsure(h, "notice")
        found = comments.find_marked_comment(number, marker, self.bot_login) if unsure else None
        if found is None:
            body = views.notice_comment(s, t, links, latest, self.mention)
            self._creating(h, "notice", t.id)
            found = comments.create_comment(number, body)
            log.info(
                "notified %s on pull request #%s: task %s %s",
                ", ".join(self.mention) or "nobody (no one to mention)",
                number,
                t.id,
                key,
            )
        older = [n for n in h.get("notices") or [] if n and n != found.node_id]
        h["noticeKey"], h["notices"] = key, [*older, found.node_id]
        h["noticeCreating"] = False
        self._save(t.id, h)
        for node_id in older:
            try:
                comments.minimize_comment(node_id)
            except (NotFound, Forbidden, Unprocessable) as exc:  # deleted, or not ours to hide
                log.info("could not hide an outdated notice on #%s: %s", number, exc)
        h["notices"] = [found.node_id]
        self._save(t.id, h)

    def _halt_notice(self, s: RunState, handles: dict[str, dict[str, Any]]) -> None:
        """One new comment when the run halted for a reason no task's notice
        tells (a provider or infrastructure stop, lost access, unresolved
        survivors): on the pull request of the first task left open, since a
        run has no conversation of its own. Posted once per halt."""
        key = views.halt_notice_key(s)
        run = handles.setdefault(RUN, {})
        if key is None or run.get("haltNotice") == key:
            return
        waiting = [
            handles[t.id]
            for t in s.tasks.values()
            if t.status != "landed" and handles.get(t.id, {}).get("pull")
        ]
        if not waiting:
            log.info("run %s halted; no pull request to post the notice on", self.run_id)
            run["haltNotice"] = key
            self._save(RUN, run)
            return
        number, comments = int(waiting[0]["pull"]), self.client.comments
        marker = views.notice_marker("run", key)
        unsure = self._unsure(run, "haltNotice")
        found = comments.find_marked_comment(number, marker, self.bot_login) if unsure else None
        if found is None:
            self._creating(run, "haltNotice", RUN)
            comments.create_comment(number, views.halt_notice(s, key, self.mention))
            log.info(
                "notified %s on pull request #%s: run %s halted",
                ", ".join(self.mention) or "nobody (no one to mention)",
                number,
                self.run_id,
            )
        run["haltNotice"], run["haltNoticeCreating"] = key, False
        self._save(RUN, run)

    def _close(self, s: RunState, t: TaskState, h: dict[str, Any]) -> None:
        """A landed task's PR is closed (the squash landed by push), after its comment.

        GitHub shows it as closed, not merged, since its merge button was not
        used: the closing body names the commit, and a draft is marked ready
        first, so it does not stay a closed draft. Where the task landed
        through the pull request itself (a protected base), GitHub merged it.
        """
        if t.status != "landed" or not h.get("pull") or h.get("closed"):
            return
        number = int(h["pull"])
        if self._closes_in_one(t, h):
            self._close_in_one(s, t, h)
            return
        by_merge = bool(pr_landing.notice(self.store.projections.tasks(self.run_id)))
        pull = self.client.pulls.get_pull(number) if h.get("adopted") else None
        if pull is None or pull.state == "open":
            node = str(h.get("pullNode") or (pull.node_id if pull is not None else ""))
            if not by_merge and node and (pull is None or pull.draft):
                try:
                    self.client.pulls.mark_ready(node)
                except GitHubError as exc:  # GitHub refused it: the PR stays a draft
                    log.info("pull request #%s stays a draft: %s", number, exc)
            if by_merge:
                self.client.pulls.update_pull(number, state="closed")
            else:
                body = views.landed_body(s, t, self.repository_url)
                self.client.pulls.update_pull(number, body=body, state="closed")
        h["closed"] = True
        h["status"] = "landed"
        self._save(t.id, h)

    def _closes_in_one(self, t: TaskState, h: dict[str, Any]) -> bool:
        """Whether a landed task's pull request is closed by one request that also
        carries its status comment's last edit: landed by push (not through the
        pull request), ODW opened the PR and its comment here (their node ids
        saved), and no executor died mid-way (a sync taken over looks first)."""
        if t.status != "landed" or h.get("closed") or h.get("adopted") or self.again:
            return False
        if not (h.get("pullNode") and h.get("commentNode")):
            return False
        return not pr_landing.notice(self.store.projections.tasks(self.run_id))

    def _close_in_one(self, s: RunState, t: TaskState, h: dict[str, Any]) -> None:
        """The status comment's last edit, the PR marked ready and closed: parts
        of the landing's one request, each with its REST write should GitHub
        refuse it; what they change is saved once they are done."""
        number, pulls, comments = int(h["pull"]), self.client.pulls, self.client.comments
        body = views.landed_body(s, t, self.repository_url)
        comment, node = self._last_comment, str(h["pullNode"])
        if comment is not None:
            self._writes.edit_comment(
                str(h["commentNode"]), comment,
                lambda: comments.edit_comment(int(h["comment"]), comment),
            )  # fmt: skip
        self._writes.mark_ready(node, lambda: _ready_or_not(pulls, node, number))
        self._writes.close_pull(
            node, body, lambda: pulls.update_pull(number, body=body, state="closed")
        )

        def closed() -> None:
            if comment is not None:
                h["commentDigest"] = views.digest(comment)
                self._edited(h, "comment")
            h["closed"] = True
            h["status"] = "landed"
            self._save(t.id, h)

        self._after.append(closed)


def _ready_or_not(pulls: Pulls, node: str, number: int) -> None:
    """Mark a draft ready; GitHub refusing it (not a draft any more) leaves it as it is."""
    try:
        pulls.mark_ready(node)
    except GitHubError as exc:
        log.info("pull request #%s stays a draft: %s", number, exc)


def _executor_note(key: str) -> bool:
    """What the executor notes on a task's row (job links, branch); the sync keeps it."""
    return key in EXECUTOR_NOTES or key.startswith(("job:", "jobRun:"))


def base_head(s: RunState, pinned: str) -> str:
    """The base's current head as the run knows it: the newest squash it landed,
    else the commit the run started from (the run check lives there)."""
    for task_id in reversed(s.landed):
        sha = s.tasks[task_id].landed_sha if task_id in s.tasks else None
        if sha:
            return sha
    return pinned


def base_commits(s: RunState, pinned: str) -> set[str | None]:
    """Every base commit the run knows (where it started, what it landed): no
    task check run is created on one of them."""
    return {None, "", pinned, *(t.landed_sha for t in s.tasks.values() if t.landed_sha)}


def _shown(t: TaskState) -> bool:
    """A task gets views once it has started (or stopped, or landed)."""
    return bool(t.attempts) or t.status in ("landed", "failed", "infra-fault")


def _plan_committed(t: TaskState, latest: Verdict | None) -> bool:
    done = t.attempts.get("design-review", 0) > 0 or t.attempts.get("implement", 0) > 0
    return done or (latest is not None and latest.stage == "plan" and latest.passed)
