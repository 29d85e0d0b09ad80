"""The dashboard's routes: read the store, build a page model, render a template.

Read-only: the only POSTs sign a browser in and out. Every page answers with a
Content-Security-Policy that allows no script at all and only the dashboard's
own stylesheet, so even text that escaped escaping could not run.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, Response, abort, redirect, render_template, request
from werkzeug.wrappers import Response as BaseResponse

from app.apphost.snapshots import load_state
from app.store import Store
from app.web.dashboard import pages, session

PREFIX = "/dashboard"
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
}


def blueprint(store: Store, token: str) -> Blueprint:
    bp = Blueprint(
        "dashboard",
        __name__,
        url_prefix=PREFIX,
        template_folder="templates",
        static_folder="static",
        static_url_path="/static",
    )

    @bp.before_request
    def _guard() -> Response | tuple[str, int] | None:
        if request.endpoint in ("dashboard.static", "dashboard.login", "dashboard.sign_in"):
            return None
        if session.signed_in(
            request.headers.get("Authorization"), request.cookies.get(session.COOKIE), token
        ):
            return None
        return render_template("login.html", next=request.path, error=None), 401

    @bp.after_request
    def _headers(resp: Response) -> Response:
        resp.headers.update(HEADERS)
        return resp

    @bp.get("/")
    def overview() -> str:
        repo = request.args.get("repo", "").strip()
        runs = store.projections.runs()
        if repo:
            runs = [v for v in runs if (v.data.get("key") or {}).get("repository") == repo]
        page = pages.overview(
            store.installations.all(),
            store.installations.all_repositories(),
            runs,
            store.inbox.recent(pages.RECENT_DELIVERIES),
        )
        return render_template("overview.html", page=page, repo=repo)

    @bp.get("/runs/<run_id>")
    def run(run_id: str) -> str:
        view = store.projections.run(run_id)
        if view is None or "key" not in view.data:
            abort(404)
        page = pages.run_page(
            load_state(store, run_id),
            store.projections.tasks(run_id),
            view.data,
            status=view.status,
            updated_at=view.updated_at,
        )
        return render_template("run.html", page=page)

    @bp.get("/login")
    def login() -> str:
        return render_template("login.html", next=_next(request.args.get("next")), error=None)

    @bp.post("/login")
    def sign_in() -> BaseResponse | tuple[str, int]:
        target = _next(request.form.get("next"))
        if not session.given_token_ok(request.form.get("token", ""), token):
            return render_template("login.html", next=target, error="That is not the token."), 401
        resp = redirect(target, code=303)
        resp.set_cookie(
            session.COOKIE,
            session.issue(token),
            max_age=session.SESSION_SECONDS,
            path=PREFIX,
            secure=True,
            httponly=True,
            samesite="Strict",
        )
        return resp

    @bp.post("/logout")
    def logout() -> BaseResponse:
        resp = redirect(f"{PREFIX}/login", code=303)
        resp.delete_cookie(
            session.COOKIE, path=PREFIX, secure=True, httponly=True, samesite="Strict"
        )
        return resp

    return bp


def _next(target: str | None) -> str:
    """Where to go after signing in: a dashboard path on this host, nothing else."""
    parts = urlsplit(target or "")
    path = parts.path
    if parts.scheme or parts.netloc or not path.startswith(f"{PREFIX}/") or "\\" in path:
        return f"{PREFIX}/"
    return path
