"""Test-only HTTP controls under `/_fake/`, for a runner in another process:
start a run, upload an artifact (a zip body), complete a run. Not GitHub's API:
on GitHub the runner does these through Actions itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

from werkzeug.wrappers import Request, Response

from tests.fakegithub import routes_actions

if TYPE_CHECKING:
    from tests.fakegithub.server import FakeGitHub


def handle(fake: FakeGitHub, request: Request) -> Response:
    parts = request.path.strip("/").split("/")  # _fake runs <id> <verb> [name]
    if request.method != "POST" or len(parts) < 4 or parts[1] != "runs" or not parts[2].isdigit():
        return Response("unknown control", 404)
    run_id = int(parts[2])
    if run_id not in fake.runs:
        return Response("no such run", 404)
    verb = parts[3]
    if verb == "start":
        routes_actions.start_run(fake, run_id)
    elif verb == "artifacts" and len(parts) == 5:
        routes_actions.upload_artifact(fake, run_id, parts[4], request.get_data())
    elif verb == "complete":
        routes_actions.complete_run(fake, run_id, request.args.get("conclusion", "success"))
    else:
        return Response("unknown control", 404)
    return Response("", 204)
