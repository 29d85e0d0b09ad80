"""The dashboard's routes: read the store, build a page model, render a template.

Read-only: every route is a GET. Every page answers with a
Content-Security-Policy that allows no script at all and only the dashboard's
own stylesheet, so even text that escaped escaping could not run.
"""

from __future__ import annotations

from flask import Blueprint, Response, abort, render_template, request

from app.apphost import run_views
from app.apphost.snapshots import load_state
from app.store import Store
from app.web.dashboard import access, pages

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
    def _guard() -> tuple[str, int, dict[str, str]] | None:
        if request.endpoint == "dashboard.static" or access.allowed(
            request.headers.get("Authorization"), token
        ):
            return None
        # The browser asks for the token (its own prompt) and sends it again.
        return render_template("signin.html"), 401, {"WWW-Authenticate": access.CHALLENGE}

    @bp.after_request
    def _headers(resp: Response) -> Response:
        resp.headers.update(HEADERS)
        return resp

    bp.add_app_template_filter(pages.when, "when")

    @bp.get("/")
    def overview() -> str:
        repo = request.args.get("repo", "").strip()
        if repo:  # every run of one repository
            runs = run_views.of_repository(store.projections.runs(), repo)
        else:  # every open run, and the finished ones updated last
            runs = store.projections.runs(status="running")
            runs += store.projections.latest(pages.RECENT_FINISHED_RUNS, status="finished")
        page = pages.overview(
            store.installations.all(),
            store.installations.all_repositories(),
            runs,
            store.inbox.recent(pages.RECENT_DELIVERIES),
        )
        return render_template(
            "overview.html", page=page, repo=repo, finished=pages.RECENT_FINISHED_RUNS
        )

    @bp.get("/runs/<run_id>")
    def run(run_id: str) -> str:
        view = store.projections.run(run_id)
        if view is None or "key" not in view.data:
            abort(404)
        page = pages.run_page(
            load_state(store, run_id),
            store.projections.tasks(run_id),
            view.data,
            status=run_views.shown_status(view.status, view.data.get("result") or {}),
            updated_at=view.updated_at,
        )
        return render_template("run.html", page=page)

    return bp
