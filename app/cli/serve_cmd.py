"""`odw serve`, `odw intake`, `odw worker` and `odw db upgrade|status`: run
the service."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from app.cli.errors import UsageError, UserError

if TYPE_CHECKING:
    from app.apphost.host import AppHost
    from app.service.worker import WorkerConfig
    from app.service_settings import Settings
    from app.store import Store

# The service's modules (SQLAlchemy, Flask, gunicorn) load only when a command
# here runs, so the rest of `odw` starts quickly.

log = logging.getLogger("odw.serve")

# Below app.web.server.COMPANION_STOP_SECONDS, so the worker stops on its own.
WORKER_STOP_SECONDS = 1.0
# How often a companion looks whether it must stop.
COMPANION_TICK = 0.2
# How often a worker asks GitHub again who the App is when it did not answer at start.
IDENTIFY_AGAIN_SECONDS = 10.0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    s = sub.add_parser("serve", help="run the webhook service under gunicorn")
    s.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=8000, help="port to bind (default 8000)")
    s.set_defaults(func=run_serve)

    i = sub.add_parser("intake", help="store deliveries for odw serve (started by odw serve)")
    i.add_argument(
        "--listen-fd",
        type=int,
        required=True,
        help="inherited descriptor of the listening Unix socket (odw serve passes it)",
    )
    # Companions end without the interpreter's teardown (`main.exit_at_once`):
    # it cost seconds of the stop's budget after a burst, and they have
    # closed what needs closing.
    i.set_defaults(func=run_intake, exit_at_once=True)

    w = sub.add_parser("worker", help="process stored deliveries (no HTTP)")
    w.add_argument("--threads", type=int, default=None, help="worker threads (default ODW_WORKERS)")
    w.add_argument(
        "--master-pid",
        type=int,
        default=None,
        help="stop once process PID is no longer this one's parent (how `odw serve` runs it)",
    )
    w.set_defaults(func=run_worker, exit_at_once=True)

    db = sub.add_parser("db", help="database schema commands")
    dbsub = db.add_subparsers(dest="db_command", metavar="COMMAND", required=True)
    up = dbsub.add_parser("upgrade", help="apply schema migrations")
    up.set_defaults(func=run_db_upgrade)
    st = dbsub.add_parser("status", help="show the schema revision")
    st.set_defaults(func=run_db_status)


def _settings() -> Settings:
    from app.service_settings import SettingsError, load_settings

    try:
        return load_settings()
    except SettingsError as exc:
        raise UserError(str(exc)) from None


def worker_config(settings: Settings) -> WorkerConfig:
    from app.service.worker import WorkerConfig

    return WorkerConfig(
        lease_seconds=settings.delivery_lease_seconds,
        max_attempts=settings.delivery_max_attempts,
        retry_base_seconds=settings.retry_base_seconds,
        retry_max_seconds=settings.retry_max_seconds,
        poll_seconds=settings.poll_seconds,
        retention_seconds=settings.retention_days * 86_400,
    )


def open_store(settings: Settings, *, migrate: bool | None = None) -> Store:
    """Open the database, migrating SQLite automatically; PostgreSQL must be
    migrated explicitly with `odw db upgrade` unless `migrate` is True."""
    from sqlalchemy.exc import OperationalError

    from app.store import SchemaOutOfDate, Store

    url = settings.database
    try:
        store = Store(url)
        if migrate if migrate is not None else store.dialect == "sqlite":
            store.upgrade()
        else:
            store.check_schema()
    except SchemaOutOfDate as exc:
        raise UserError(str(exc)) from None
    except OperationalError as exc:
        raise UserError(f"cannot open database {url}: {str(exc.orig or exc).strip()}") from None
    except ValueError as exc:
        raise UserError(f"ODW_DATABASE_URL: {exc}") from None
    return store


def metrics_dir(settings: Settings, port: int) -> str:
    """A fresh directory for the counts of this `odw serve`'s processes, set as
    PROMETHEUS_MULTIPROC_DIR for them all (children inherit it). Called before
    prometheus_client is imported, which reads the variable once. Emptied at
    start: the files left by an earlier service are another's counts. One per
    port, so two services on one host and data directory keep their own."""
    import shutil
    from pathlib import Path

    path = Path(settings.data_dir) / "metrics" / str(port)
    try:
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(0o700)  # the counts are the operator's, as `/metrics` is
    except OSError as exc:
        why = exc.strerror or exc
        raise UserError(f"cannot create the metrics directory {path}: {why}") from None
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(path)
    return str(path)


def run_serve(args: argparse.Namespace) -> int:
    import tempfile

    from app.service.startup_checks import check_services, check_settings

    settings, findings = check_settings()
    if settings is None or findings.problems:
        raise _refused(findings.problems)
    metrics_dir(settings, args.port)
    check_services(settings, findings)
    if findings.problems:
        raise _refused(findings.problems)

    from prometheus_client import multiprocess

    from app.logs import configure_logging
    from app.python_child import odw_argv
    from app.store import Store
    from app.web.app import create_app
    from app.web.intake.client import IntakeClient
    from app.web.intake.listener import private_listener
    from app.web.server import Companion, GunicornApp, gunicorn_options

    configure_logging(settings.log_level)
    for warning in findings.warnings:
        log.warning(warning)
    # Migrate (or check) once in the master, before gunicorn forks its workers.
    open_store(settings).close()
    state: dict[str, Any] = {}
    # The intake's socket: bound here and inherited by each intake process,
    # so a restarted intake takes over the same socket.
    try:
        intake = private_listener()
    except OSError as exc:
        raise UserError(
            f"cannot create the intake socket in {tempfile.gettempdir()}: "
            f"{exc.strerror or exc} (set TMPDIR to a short, writable directory)"
        ) from None

    def factory() -> Any:
        store = Store(settings.database)
        state["store"] = store
        return create_app(
            settings,
            store,
            intake=IntakeClient(intake.path),
            worker_required=settings.workers > 0,
            github=findings.github,
        )

    def post_worker_init(_worker: Any) -> None:
        configure_logging(settings.log_level)

    options = gunicorn_options(settings, args.host, args.port)

    def child_exit(_server: Any, worker: Any) -> None:
        # prometheus_client's multiprocess mode: a dead process's live gauges go.
        multiprocess.mark_process_dead(worker.pid)  # type: ignore[no-untyped-call]

    hooks: dict[str, Callable[..., Any]] = {
        "post_worker_init": post_worker_init,
        "child_exit": child_exit,
    }
    fd = intake.sock.fileno()
    # Through app.python_child: modules in the service's directory are never imported.
    companions = [Companion("intake", odw_argv("intake", "--listen-fd", str(fd)), (fd,))]
    if settings.workers > 0:
        companions.append(
            Companion(
                "delivery worker",
                odw_argv(
                    "worker", "--threads", str(settings.workers), "--master-pid", str(os.getpid())
                ),
            )
        )
    try:
        GunicornApp(factory, options, hooks).run(companions)
    finally:
        intake.close()
    return 0


def _refused(problems: list[str]) -> UsageError:
    """One line per problem, each naming its variable (main prefixes the first)."""
    return UsageError("\nodw serve: ".join(problems))


def stop_on_signals(what: str, *, obey: bool = True) -> threading.Event:
    """An event set by SIGTERM or SIGINT (`obey`), or only logged (the intake:
    see `stop_at_stdin_end`)."""
    stop = threading.Event()

    def on_signal(signum: int, _frame: object) -> None:
        name = signal.Signals(signum).name
        if obey:
            log.info("%s stopping on %s", what, name)
            stop.set()
        else:
            log.info("%s got %s: serving until odw serve's HTTP processes are done", what, name)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return stop


def stop_at_stdin_end(what: str, stop: threading.Event) -> None:
    """Set `stop` once stdin ends: `odw serve`'s master closes a companion's
    stdin to stop it, after its HTTP processes are done (`app.web.server.Companion`).
    A SIGTERM sent to the whole process group reaches the intake while HTTP
    request threads still wait on it; stopping then left them waiting for an
    answer until gunicorn's graceful timeout (30 s)."""

    def watch() -> None:
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        if not stop.is_set():
            log.info("%s stopping: odw serve asked", what)
        stop.set()

    threading.Thread(target=watch, name=f"odw-{what}-stdin", daemon=True).start()


def run_intake(args: argparse.Namespace) -> int:
    from app.logs import configure_logging
    from app.web.intake.batch_writer import BatchWriter
    from app.web.intake.process import serve_intake

    settings = _settings()
    configure_logging(settings.log_level)
    try:
        listener = socket.socket(fileno=args.listen_fd)
    except OSError as exc:
        raise UserError(f"--listen-fd {args.listen_fd}: {exc.strerror or exc}") from None
    if listener.family != socket.AF_UNIX or listener.type != socket.SOCK_STREAM:
        listener.detach()
        raise UserError(f"--listen-fd {args.listen_fd} is not a Unix stream socket")
    store = open_store(settings)
    stop = stop_on_signals("intake", obey=False)
    stop_at_stdin_end("intake", stop)
    parent = os.getppid()
    log.info("intake started", extra={"database": store.describe()})
    # Also stops when the master is gone (its children are then reparented).
    serve_intake(
        BatchWriter(store.inbox),
        listener,
        lambda: not stop.is_set() and os.getppid() == parent,
        tick=COMPANION_TICK,
    )
    listener.close()  # this process's copy; the master keeps its own
    store.close()
    log.info("intake stopped")
    return 0


def run_worker(args: argparse.Namespace) -> int:
    from app.logs import configure_logging
    from app.service.handlers import build_router
    from app.service.heartbeat import Pulse
    from app.service.worker import WorkerPool

    settings = _settings()
    configure_logging(settings.log_level)
    threads = settings.workers if args.threads is None else args.threads
    if threads < 1:
        raise UserError("odw worker needs at least one thread (--threads or ODW_WORKERS)")
    store = open_store(settings)
    host, waiting = _app_host(settings, store)
    stop = stop_on_signals("worker")
    returned = store.inbox.release_dead()
    if returned:
        log.info("%d deliveries held by stopped workers of this host are due again", returned)
    returned = store.outbox.release_dead()
    if returned:
        log.info("%d effects held by stopped executors of this host are due again", returned)
    pool = WorkerPool(store, build_router(), worker_config(settings), threads).start()
    if host is not None:
        host.start()
    log.info("worker started", extra={"threads": threads, "database": store.describe()})
    # A companion also stops when its master is gone (it is then reparented), as
    # the intake does: a killed `odw serve` must not leave a worker behind. The
    # master names itself, so a master killed before this line is noticed too.
    pulse = Pulse(store, acts_on_runs=host is not None)
    running = [*pool.threads, *(host.threads if host is not None else [])]
    pulse.due(running)
    ask_again = time.monotonic() + IDENTIFY_AGAIN_SECONDS
    while not stop.wait(COMPANION_TICK):
        if args.master_pid is not None and os.getppid() != args.master_pid:
            log.info("worker stopping: its master %s is gone", args.master_pid)
            break
        if waiting and time.monotonic() >= ask_again:
            # GitHub did not answer who the App is at start: deliveries are
            # stored and handled meanwhile; the App's work starts once it does.
            host, waiting = _app_host(settings, store)
            ask_again = time.monotonic() + IDENTIFY_AGAIN_SECONDS
            if host is not None:
                host.start()
                running += host.threads
                pulse.acts_on_runs = True
        pulse.due(running)
    # Within what `odw serve` waits for its companions: a delivery not finished
    # by then stays in the inbox, and the next start takes it up at once.
    clean = pool.stop(timeout=WORKER_STOP_SECONDS)
    if host is not None:
        host.stop(timeout=WORKER_STOP_SECONDS / 2)
    pulse.end()
    store.close()
    log.info("worker stopped", extra={"clean": clean})
    return 0 if clean else 1


def _app_host(settings: Settings, store: Store) -> tuple[AppHost | None, bool]:
    """The App host, and whether it waits for GitHub: a key GitHub refuses, or
    credentials that cannot be used, is a one-line refusal (exit 2); GitHub not
    answering `GET /app` is a warning, asked again every `IDENTIFY_AGAIN_SECONDS`."""
    from app.apphost.host import AppHost
    from app.github.auth import CredentialsError
    from app.github.errors import GitHubError, Unauthorized

    try:
        return AppHost.from_settings(settings, store), False
    except CredentialsError as exc:
        store.close()
        raise UsageError(str(exc)) from None
    except Unauthorized as exc:
        store.close()
        raise UsageError(
            f"ODW_APP_ID / ODW_PRIVATE_KEY(_PATH): GitHub refused the App's token ({exc.reason})"
        ) from None
    except GitHubError as exc:
        log.warning(
            "GitHub did not say who the App is (GET /app: %s %s); the App's work starts "
            "once it does",
            exc.status or "no answer",
            exc.reason,
        )
        return None, True


def run_db_upgrade(_args: argparse.Namespace) -> int:
    from app.store import migrate as migrations

    settings = _settings()
    store = open_store(settings, migrate=True)
    print(f"{store.describe()}: schema at {migrations.current_revision(store.engine)}")
    store.close()
    return 0


def run_db_status(_args: argparse.Namespace) -> int:
    from sqlalchemy.exc import OperationalError

    from app.store import Store
    from app.store import migrate as migrations

    settings = _settings()
    try:
        store = Store(settings.database)
        current = migrations.current_revision(store.engine)
    except OperationalError as exc:
        raise UserError(f"cannot open database: {str(exc.orig or exc).strip()}") from None
    head = migrations.head_revision()
    state = "current" if current == head else "needs `odw db upgrade`"
    print(f"{store.describe()}: schema at {current or 'nothing'}, odw needs {head} ({state})")
    store.close()
    return 0 if current == head else 1
