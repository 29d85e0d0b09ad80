"""Check runs on PyGithub (needs `checks: write`)."""

from __future__ import annotations

from typing import Any

from app.core.github_limits import CHECK_OUTPUT_LIMIT, fit
from app.github.conditional import ConditionalGets
from app.github.protocols import CheckRun, CheckRunFields
from app.github.transport import Transport

PERMISSIONS = {"checks": "write"}
MAX_ACTIONS = 3


def _arguments(fields: CheckRunFields) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for name in ("status", "conclusion", "details_url", "external_id"):
        value = getattr(fields, name)
        if value is not None:
            args[name] = value
    if fields.title is not None or fields.summary is not None:
        output = {
            "title": fields.title or "",
            "summary": fit(fields.summary or "", CHECK_OUTPUT_LIMIT),
        }
        if fields.text is not None:
            output["text"] = fit(fields.text, CHECK_OUTPUT_LIMIT)
        args["output"] = output
    if fields.actions is not None:
        if len(fields.actions) > MAX_ACTIONS:
            raise ValueError(f"a check run takes at most {MAX_ACTIONS} actions")
        for a in fields.actions:
            if len(a.label) > 20 or len(a.identifier) > 20 or len(a.description) > 40:
                raise ValueError(
                    f"check run action {a.identifier!r}: label and identifier take at most "
                    "20 characters, description 40"
                )
        args["actions"] = [
            {"label": a.label, "description": a.description, "identifier": a.identifier}
            for a in fields.actions
        ]
    return args


def from_json(data: dict[str, Any]) -> CheckRun:
    output = data.get("output") or {}
    return CheckRun(
        id=int(data["id"]),
        name=data["name"],
        head_sha=data["head_sha"],
        status=data["status"],
        conclusion=data.get("conclusion"),
        external_id=data.get("external_id") or None,
        title=output.get("title"),
        summary=output.get("summary"),
        details_url=data.get("details_url"),
        html_url=data.get("html_url"),
        node_id=str(data.get("node_id") or ""),
    )


def _from_object(run: Any) -> CheckRun:
    return from_json(run.raw_data)


class GitHubChecks:
    def __init__(self, transport: Transport) -> None:
        self._t = transport
        self._polls = ConditionalGets(transport)

    def create_check_run(
        self, name: str, head_sha: str, fields: CheckRunFields, *, replacing: int | None = None
    ) -> CheckRun:
        """A new check run. `replacing`: the completed one it follows (same name
        and external id), which a lost answer's re-read must not take for it."""
        args = _arguments(fields)

        def again() -> CheckRun | None:
            for run in self.check_runs_for_ref(head_sha, name):
                if run.external_id == fields.external_id and run.id != replacing:
                    return run
            return None

        return self._t.call(
            "checks.create",
            lambda: _from_object(self._t.repo.create_check_run(name, head_sha, **args)),
            kind="create",
            # Without an external_id a lost answer cannot be told from a lost request.
            reread=again if fields.external_id else None,
        )

    def update_check_run(self, check_run_id: int, fields: CheckRunFields) -> CheckRun:
        args = _arguments(fields)

        def update() -> CheckRun:
            _, data = self._t.request("PATCH", f"/check-runs/{check_run_id}", body=args)
            return from_json(data)

        return self._t.call("checks.update", update, kind="update")

    def check_runs_for_ref(self, ref: str, name: str | None = None) -> list[CheckRun]:
        params: dict[str, Any] = {"per_page": 100, "filter": "latest"}
        if name:
            params["check_name"] = name
        suffix = f"/commits/{ref}/check-runs"

        def fetch() -> list[Any]:
            # The first page is polled (a 304 is free); later pages follow `Link`.
            first = self._polls.get_page(suffix, params)
            return self._t.paginate(suffix, "check_runs", first=first)

        return [from_json(run) for run in self._t.call("checks.list", fetch)]
