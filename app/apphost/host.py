"""The App host: the outbox executor and the reconciler, as threads of a service process.

`odw serve` starts one `AppHost` per gunicorn worker process when the App's
credentials are configured (`ODW_APP_ID`, and `ODW_PRIVATE_KEY` or
`ODW_PRIVATE_KEY_PATH`); several
processes share the work safely through the outbox's leases. The webhook side
needs none of this: its handlers write to the store only (`api.py`).
"""

from __future__ import annotations

import logging
import threading

from app.apphost.executor import Executor
from app.apphost.performers.base import HostConfig
from app.apphost.performers.command import COMMAND_KINDS
from app.apphost.reconcile import Reconciler
from app.github import GitHubApp
from app.service_settings import Settings
from app.store import Store

log = logging.getLogger("odw.apphost")


class AppHost:
    def __init__(
        self,
        store: Store,
        github: GitHubApp,
        config: HostConfig,
        *,
        executors: int = 2,
        reconcile_seconds: float = 300.0,
        poll_seconds: float = 0.2,
    ) -> None:
        self.executor = Executor(store, github, config)
        self.reconciler = Reconciler(self.executor, reconcile_seconds)
        self.poll = poll_seconds
        self.stop_event = threading.Event()
        self.threads = [
            threading.Thread(
                target=self.executor.run,
                args=(self.stop_event, poll_seconds),
                name=f"odw-executor-{i}",
                daemon=True,
            )
            for i in range(executors)
        ]
        # A lane for /odw commands and button clicks only: never behind long git work.
        self.threads.append(
            threading.Thread(
                target=self.executor.run,
                args=(self.stop_event, poll_seconds, COMMAND_KINDS),
                name="odw-commands",
                daemon=True,
            )
        )
        self.threads.append(
            threading.Thread(
                target=self.reconciler.run,
                args=(self.stop_event,),
                name="odw-reconciler",
                daemon=True,
            )
        )

    @classmethod
    def from_settings(cls, settings: Settings, store: Store) -> AppHost | None:
        """The host for `odw serve`, or None when none of the App's credentials is
        set; one without the other, or an unusable key, is CredentialsError. Asks
        GitHub for the App's slug (`GitHubApp.identify`): its bot login is whose
        comments and pull requests the host trusts as its own."""
        if (
            settings.app_id is None
            and settings.private_key_path is None
            and settings.private_key is None
        ):
            log.info("ODW_APP_ID / ODW_PRIVATE_KEY(_PATH) unset: webhooks are stored, not acted on")
            return None
        github = GitHubApp.from_settings(settings)
        # Once: `odw serve` asks again every few seconds while GitHub does not
        # answer, and must stay responsive (healthy, stoppable) meanwhile.
        slug = github.identify(attempts=1)
        log.info("the App is %s (bot %s)", slug, github.bot_login)
        return cls(
            store,
            github,
            HostConfig(
                data_dir=settings.data_dir / "apphost",
                bot_login=github.bot_login,
                details_url=settings.public_url or None,
                retry_base_seconds=settings.retry_base_seconds,
                lease_seconds=settings.effect_lease_seconds,
            ),
            executors=max(1, settings.executors),
            reconcile_seconds=settings.reconcile_seconds,
            poll_seconds=settings.poll_seconds,
        )

    def start(self) -> AppHost:
        for t in self.threads:
            t.start()
        return self

    def stop(self, timeout: float = 20.0) -> None:
        self.stop_event.set()
        self.executor.wake.set()
        for t in self.threads:
            t.join(timeout)
