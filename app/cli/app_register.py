"""`odw app register`: GitHub's manifest flow from a page served on 127.0.0.1.

The page sends the person's browser to GitHub's "new App" form with the
manifest; GitHub sends it back to this page's `/callback` with a code, which is
exchanged for the App's settings, written to a new file (mode 0600) that
`odw serve` reads through `ODW_ENV_FILE`.
"""

from __future__ import annotations

import argparse
import hmac
import os
import secrets
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from app.cli.errors import UsageError, UserError
from app.github import registration as reg
from app.service_settings import DEFAULT_API_URL, checked_api_url

CALLBACK = "/callback"


def add_parser(inner: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = inner.add_parser(
        "register",
        help="register the GitHub App with GitHub's manifest flow and write its settings",
        description="Serve a page on 127.0.0.1 that registers the App on GitHub (you click "
        "Create GitHub App there), then write the App's id, webhook secret and private key "
        "to a new settings file for `ODW_ENV_FILE=FILE odw serve`.",
    )
    p.add_argument(
        "--url", required=True, help="the service's public base URL (webhooks go to URL/webhooks)"
    )
    p.add_argument("--org", help="register the App for this organisation (default: your account)")
    p.add_argument("--name", help="the App's name, unique on GitHub (asked when missing)")
    p.add_argument(
        "--env-file",
        type=Path,
        default=Path("odw.env"),
        help="the settings file to create (default odw.env; never overwritten)",
    )
    p.add_argument(
        "--port", type=int, default=0, help="the local page's port (default: any free one)"
    )
    p.add_argument(
        "--github-url",
        default=os.environ.get("ODW_GITHUB_URL", reg.DEFAULT_WEB_URL),
        help="GitHub's web address (default https://github.com, or ODW_GITHUB_URL; "
        "https://HOST for GitHub Enterprise Server)",
    )
    p.add_argument(
        "--api-url",
        default=os.environ.get("ODW_GITHUB_API_URL", DEFAULT_API_URL),
        help="GitHub's REST root (default https://api.github.com, or ODW_GITHUB_API_URL)",
    )
    p.add_argument("--no-browser", action="store_true", help="print the page's address only")
    p.set_defaults(func=run_app_register)


def _name(given: str | None) -> str:
    if given is None:
        prompt = "The App's name, unique on GitHub (e.g. odw-<your org>): "
        print(prompt, end="", file=sys.stderr, flush=True)
        given = sys.stdin.readline()
        if not given:
            raise UsageError("--name is required (nothing to read the name from)")
    name = given.strip()
    if not name:
        raise UsageError("the App's name must not be empty")
    return name


def run_app_register(args: argparse.Namespace) -> int:
    from app.github.manifest import ManifestError, manifest

    try:
        web_url = checked_api_url(args.github_url)
    except ValueError:
        raise UsageError(
            "--github-url must be https://github.com or https://HOST (GitHub Enterprise "
            f"Server; http:// only for a loopback host), got {args.github_url!r}"
        ) from None
    try:
        api_url = checked_api_url(args.api_url)
    except ValueError as exc:
        raise UsageError(f"--api-url {exc}") from None
    target: Path = args.env_file
    if target.exists():
        raise UserError(f"{target} exists: choose another --env-file, or remove it first")
    try:
        data = manifest(args.url)
    except ManifestError as exc:
        raise UsageError(str(exc)) from None
    data["name"] = _name(args.name)
    state = secrets.token_urlsafe(24)
    flow = _Flow(state, web_url, api_url, target)
    try:
        server = ThreadingHTTPServer(("127.0.0.1", args.port), flow.handler())
    except OSError as exc:
        raise UserError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror}") from None
    page = f"http://127.0.0.1:{server.server_address[1]}/"
    data["redirect_url"] = page.rstrip("/") + CALLBACK
    flow.page = reg.form_page(reg.form_url(web_url, args.org, state), data)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1})
    thread.start()
    try:
        print(f"odw app: open {page} in a browser signed in to GitHub", flush=True)
        print("odw app: (there, click Create GitHub App; Ctrl-C stops)", flush=True)
        if not args.no_browser:
            import webbrowser

            webbrowser.open(page)
        flow.done.wait()
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    if flow.error is not None:
        raise UserError(flow.error)
    app = flow.app
    if app is None:  # `done` is set with an App or an error
        raise UserError("the registration ended without an App")
    names = ", ".join(reg.settings_values(app, api_url))
    print(f"odw app: registered the GitHub App {app.name!r} (id {app.app_id}, slug {app.slug})")
    print(f"odw app: wrote {names} to {target} (mode 0600)")
    print(f"odw app: start the service: ODW_ENV_FILE={target} odw serve")
    print(f"odw app: install the App: {reg.install_url(web_url, app.slug)}")
    return 0


class _Flow:
    """The local page's state: the form, then the one callback that counts."""

    def __init__(self, state: str, web_url: str, api_url: str, target: Path) -> None:
        self.state = state
        self.web_url = web_url
        self.api_url = api_url
        self.target = target
        self.page = ""
        self.done = threading.Event()
        self.lock = threading.Lock()
        self.app: reg.RegisteredApp | None = None
        self.error: str | None = None

    def callback(self, query: dict[str, list[str]]) -> tuple[int, str]:
        state = (query.get("state") or [""])[0]
        code = (query.get("code") or [""])[0]
        if not code or not hmac.compare_digest(state.encode(), self.state.encode()):
            return 400, reg.done_page(
                "Not this registration", "This address does not match the registration under way."
            )
        with self.lock:
            if self.done.is_set():
                return 409, reg.done_page("Already done", "This registration is over.")
            try:
                app = reg.exchange(self.api_url, code)
                try:
                    write_settings(self.target, reg.settings_text(app, self.api_url, self.web_url))
                except UserError as exc:
                    raise reg.RegistrationError(
                        f"GitHub registered the App {app.slug} (id {app.app_id}) but {exc}: "
                        "generate a private key in the App's settings on GitHub"
                    ) from None
            except reg.RegistrationError as exc:
                self.error = str(exc)
                self.done.set()
                return 502, reg.done_page("Registration failed", str(exc))
            self.app = app
            self.done.set()
        link = reg.install_url(self.web_url, app.slug)
        return 200, reg.done_page(
            f"Registered {app.name}",
            f"The settings are in {self.target}. Install the App on your repositories:",
            link,
        )

    def handler(self) -> type[BaseHTTPRequestHandler]:
        flow = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path == "/":
                    status, body = 200, flow.page
                elif parts.path == CALLBACK:
                    status, body = flow.callback(parse_qs(parts.query))
                else:
                    status, body = 404, reg.done_page("Not found", "Nothing here.")
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: object) -> None:
                return None  # the code in a query string stays out of the terminal

        return Handler


def write_settings(path: Path, text: str) -> None:
    """Create `path` with mode 0600 and `text`; an existing file is never replaced."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise UserError(f"{path} exists: choose another --env-file, or remove it first") from None
    except OSError as exc:
        raise UserError(f"cannot create {path}: {exc.strerror}") from None
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        os.fchmod(fh.fileno(), 0o600)
        fh.write(text)
