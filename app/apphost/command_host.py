"""The App host's side of a command: `app.commands.host.CommandHost` over the
store. Settings from the base, moves into the open run through `api`,
launches through its start request, status from the stored run."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from app.apphost import api
from app.apphost.runs import RunKey, find_open
from app.apphost.status_reply import run_status, task_status
from app.apphost.step import load_state
from app.commands.answers import sentence
from app.commands.host import Answer, Launch, Where
from app.commands.said import launch_said, move_said
from app.core.discovery import SurvivorEvidence
from app.core.events import event_from_json
from app.core.inputs import OperatorMove
from app.core.naming import task_id_from_branch
from app.core.repo_config import CONFIG_PATH, ConfigProblem, RepoConfig, read_repo_config
from app.github.client import RepositoryClient
from app.github.errors import FileTooLarge
from app.store import Store

SETTINGS_SECONDS = 30.0


class AppCommandHost:
    def __init__(
        self,
        store: Store,
        client: Callable[[Where], RepositoryClient],
        wake: Callable[[], None] = lambda: None,
        clock: Callable[[], float] = time.monotonic,
        read_branch: Callable[[Where, str, str], SurvivorEvidence] | None = None,
    ) -> None:
        self.store = store
        self.client = client
        self.wake = wake
        self.clock = clock
        # (where, branch, task id) -> what the App's clone says about a kept branch
        self.read_branch = read_branch
        self._settings: dict[tuple[int, str, str], tuple[float, RepoConfig]] = {}
        self._lock = threading.Lock()

    def key(self, where: Where) -> RunKey:
        return RunKey(where.installation, where.repository, where.base)

    def settings(self, where: Where) -> RepoConfig:
        """`.github/odw.yml` on the base (cached briefly); an invalid file counts as
        the defaults here, and its own check says what is wrong."""
        cache_key = (where.installation, where.repository, where.base)
        now = self.clock()
        with self._lock:
            hit = self._settings.get(cache_key)
        if hit is not None and now - hit[0] < SETTINGS_SECONDS:
            return hit[1]
        contents = self.client(where).contents
        sha = contents.branch_sha(where.base)
        try:
            config = read_repo_config(contents.file_at(CONFIG_PATH, sha) if sha else None)
        except (ConfigProblem, FileTooLarge):
            config = RepoConfig()
        with self._lock:
            self._settings[cache_key] = (now, config)
        return config

    def task_of_pull(self, where: Where, number: int) -> str | None:
        head = self.client(where).pulls.get_pull(number).head_ref
        found = task_id_from_branch(head)
        return found[0] if found else None

    def _handles(self, where: Where) -> tuple[str | None, dict[str, dict[str, Any]]]:
        run_id = find_open(self.store, self.key(where))
        return run_id, (self.store.projections.tasks(run_id) if run_id else {})

    def open_run(self, where: Where) -> str | None:
        """The id of the open run on `where`'s base, if any."""
        return find_open(self.store, self.key(where))

    def pull_of_task(self, where: Where, task: str) -> int | None:
        _, handles = self._handles(where)
        number = handles.get(task, {}).get("pull")
        return int(number) if number else None

    def _links(self, handles: dict[str, dict[str, Any]], task: str | None) -> dict[str, Any]:
        return {
            "run_check_url": handles.get("", {}).get("runUrl"),
            "task_pull_url": handles.get(task, {}).get("pullUrl") if task else None,
        }

    def status(self, where: Where, task: str | None) -> Answer:
        run_id, handles = self._handles(where)
        if run_id is None:
            return Answer(True, f"no ODW run is open on `{where.base}`; `/odw run` starts one")
        s = load_state(self.store, run_id)
        if task is not None:
            if task not in s.tasks:
                return Answer(False, f"run `{run_id}` has no open task {task}")
            return Answer(True, task_status(s, task), **self._links(handles, task))
        return Answer(True, run_status(s, where.base), **self._links(handles, None))

    def move(self, where: Where, move: OperatorMove) -> Answer:
        move = self._with_evidence(where, move)
        step = api.submit_move(
            self.store, self.key(where), move.move, by=move.by, task=move.task,
            reason=move.reason, overrides=dict(move.overrides), evidence=move.evidence,
        )  # fmt: skip
        self.wake()
        _, handles = self._handles(where)
        links = self._links(handles, move.task)
        if step.refused:
            return Answer(False, sentence(step.refused), **links)
        rejected = [e for e in step.events if e.get("type") == "move-rejected"]
        if rejected:
            return Answer(False, f"{sentence(rejected[-1]['why'])} Nothing was changed.", **links)
        events = [event_from_json(e) for e in step.events]
        state = step.state or load_state(self.store, step.run_id)
        said = move_said(move, events, step.effects, state)
        return Answer(True, said, dispatched=bool(step.effects), **links)

    def _with_evidence(self, where: Where, move: OperatorMove) -> OperatorMove:
        """`recover` and `rearm` continue from the kept branch: read it first."""
        if move.move not in ("recover", "rearm") or move.task is None or self.read_branch is None:
            return move
        run_id = self.open_run(where)
        t = load_state(self.store, run_id).tasks.get(move.task) if run_id else None
        if t is None or not t.branch_started:
            return move  # the core refuses or starts again from plan; nothing to read
        evidence = self.read_branch(where, t.branch, t.id)
        return move.model_copy(update={"evidence": evidence})

    def launch(self, where: Where, launch: Launch) -> Answer:
        key = self.key(where)
        run_id, handles = self._handles(where)
        if run_id is not None:
            return Answer(
                False,
                f"run `{run_id}` is still open on `{where.base}`; `/odw status` shows it "
                "(`/odw halt` stops it)",
                **self._links(handles, launch.task or launch.resume_task),
            )
        api.request_start(self.store, key, by=launch.by, launch=launch)
        self.wake()
        return Answer(True, f"{launch_said(launch, where.base)}; its run check follows.",
                      dispatched=True)  # fmt: skip
