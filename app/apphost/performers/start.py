"""`StartRequested`: read the settings at the base's SHA and start a run unless one is open.

One start per repository and base at a time (a lease). Credentials that
cannot read the base start nothing; an invalid `.github/odw.yml` or roadmap is
said on a failing `ODW · config` check, and so is `integration: pull-request`
on a repository whose settings disallow squash merging (every merge would be
refused); a push starts a run only when the settings say `auto` and the
roadmap changed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

from app.apphost import api
from app.apphost.app_effects import StartRequested
from app.apphost.installation_access import check as check_credentials
from app.apphost.performers.base import HostContext
from app.apphost.performers.views import ViewsPerformer
from app.apphost.pr_landing import SQUASH_DISALLOWED
from app.apphost.run_settings import RunSettings, parse_settings
from app.apphost.runs import RunKey, find_open, new_run_id
from app.apphost.step import decide_step
from app.apphost.views import config_check
from app.commands.launch import start_for
from app.core.config import ConfigError
from app.core.held import NotAnOpenTask
from app.core.inputs import StartRun
from app.core.naming import ROADMAP_PATH
from app.core.repo_config import CONFIG_PATH, ConfigProblem, read_repo_config
from app.core.roadmap_edit import TickError, is_ticked, tick
from app.core.roadmap_parse import parse_roadmap
from app.github.client import RepositoryClient
from app.github.errors import FileTooLarge
from app.github.protocols import CheckRunFields, Contents

log = logging.getLogger("odw.apphost")


@dataclass
class StartPerformer:
    context: HostContext

    def perform(self, start: StartRequested, *, again: bool) -> Any:
        key, default = start.key, None
        if key.base == api.DEFAULT_BASE:
            default = self.context.client(key).contents.default_branch()
            key = replace(key, base=default)
        lease = f"app-start:{key.installation}:{key.repository}:{key.base}"
        with self.context.holding(lease, f"another executor is starting a run of {key.label()}"):
            return self._start(key, start, default)

    def gave_up(self, start: StartRequested, error: str) -> None:
        """Nothing waits on a start: its failure is the entry's last error."""

    def _start(self, key: RunKey, start: StartRequested, default: str | None) -> Any:
        ctx = self.context
        open_id = find_open(ctx.store, key)
        if open_id is not None:
            ViewsPerformer(ctx).sync(open_id)  # a start asked again shows the open run
            return {"run": open_id, "started": False}
        client = ctx.client(key)
        # Fail closed: credentials that cannot do what the run needs start a
        # run that halts at once (its check says what to grant).
        preflight = check_credentials(client, key.base, default)
        if any(m.needed_for == "read the base" for m in preflight.missing):
            log.warning("cannot start %s: %s", key.label(), preflight.halt())
            return {"blocked": preflight.blocked()}
        sha = start.sha or client.contents.branch_sha(key.base)
        if sha is None:
            return {"skipped": f"{key.repository} has no branch {key.base}"}
        config_file: bytes | None = None
        try:
            config_file = _file(client.contents, CONFIG_PATH, sha)
            roadmap_text = _text(_file(client.contents, ROADMAP_PATH, sha))
            settings = parse_settings(config_file, roadmap_text)
        except ConfigProblem as p:
            if start.only_if_auto and p.path != CONFIG_PATH and not _auto(config_file):
                return {"skipped": "auto is off"}
            _config_refused(client, sha, p)
            return {"config": str(p)}
        if start.only_if_auto:
            if not settings.config.auto:
                return {"skipped": "auto is off"}
            before = start.before or ""
            earlier = (
                _text(client.contents.file_at(ROADMAP_PATH, before)) if before.strip("0") else None
            )
            if earlier == roadmap_text:
                return {"skipped": "the push did not change the roadmap"}
        if settings.config.integration == "pull-request" and (
            client.contents.allows_squash_merge() is False
        ):
            # Every merge would be refused with the same 405: refuse the run instead.
            problem = ConfigProblem(
                CONFIG_PATH, "integration", None, f"is `pull-request`, but {SQUASH_DISALLOWED}"
            )
            _config_refused(client, sha, problem)
            return {"refused": problem.message}
        settings = _count_merged(settings, api.merged_by_people(ctx.store, key))
        run_id = new_run_id(key)
        run_config, held, survivors = settings.config.config, [], []
        if start.launch is not None:
            try:
                launch = start_for(
                    start.launch, run_config, settings.roadmap, key.base,
                    lambda: ctx.clone(key), ctx.run_dir(run_id),
                )  # fmt: skip
            except (ConfigError, NotAnOpenTask) as exc:
                return {"refused": str(exc)}
            run_config, held, survivors = launch.config, launch.held, launch.survivors
        meta = {
            "key": key.to_json(),
            "sha": sha,
            "by": start.by,
            "identity": (
                settings.config.identity.model_dump() if settings.config.identity else None
            ),
            "deleteTaskBranches": settings.config.delete_task_branches,
            "integration": settings.config.integration,
            "notify": list(settings.config.notify),
        }
        decide_step(
            ctx.store,
            run_id,
            StartRun(
                at=ctx.clock(),
                run_id=run_id,
                base=key.base,
                roadmap=settings.roadmap_text,
                config=run_config,
                held=held,
                survivors=survivors,
                preflight=preflight,
            ),
            api.tokens,
            meta=meta,
        )
        log.info("run %s started for %s at %s", run_id, key.label(), sha[:12])
        return {"run": run_id, "started": True}


def _config_refused(client: RepositoryClient, sha: str, p: ConfigProblem) -> None:
    """A failing `ODW · config` check on `sha` saying why nothing started."""
    view = config_check(p.path, p.field, p.line, p.message)
    client.checks.create_check_run(
        view.name,
        sha,
        CheckRunFields(
            status=view.status,
            conclusion=view.conclusion,
            title=view.title,
            summary=view.summary,
            external_id=f"config:{sha}",
        ),
    )


def _file(contents: Contents, path: str, sha: str) -> bytes | None:
    """The file at `sha`; one GitHub will not hand over inline (over 1 MB) is a
    problem of that file, said on the config check."""
    try:
        return contents.file_at(path, sha)
    except FileTooLarge as exc:
        raise ConfigProblem(path, "", None, exc.reason) from None


def _text(data: bytes | None) -> str | None:
    if data is None:
        return None
    return data.decode("utf-8", errors="replace")


def _auto(config_file: bytes | None) -> bool:
    try:
        return read_repo_config(config_file).auto
    except ConfigProblem:
        return True  # the file itself is wrong: always say so


def _count_merged(settings: RunSettings, merged: dict[str, Any]) -> RunSettings:
    """The roadmap as the base reads once the boxes of tasks people merged are
    ticked: a merged pull request is the evidence, whatever the trailers say."""
    text = settings.roadmap_text
    for task in merged:
        if not is_ticked(text, task):
            try:
                text = tick(text, task)
            except TickError:
                continue  # no longer in the roadmap (or ambiguous): nothing to count
    if text == settings.roadmap_text:
        return settings
    return replace(
        settings,
        roadmap_text=text,
        roadmap=parse_roadmap(text, external_met=settings.config.config.external_met),
    )
