"""Actions: workflow_dispatch (with or without `return_run_details`), runs,
jobs and artifacts, and the artifact storage host the zip route redirects to."""

from __future__ import annotations

import io
import re
import secrets
import threading
import zipfile
import zlib
from typing import Any

import yaml
from werkzeug.wrappers import Request, Response

from tests.fakegithub import state as s
from tests.fakegithub.paging import page
from tests.fakegithub.routes import repo_of
from tests.fakegithub.server import Call, FakeGitHub, Reply, error, route

STORAGE_TTL = 60.0


def workflow_id(name: str) -> int:
    return zlib.crc32(name.encode()) % 10_000_000 + 1


def known_workflow(repo: s.Repository, ident: str) -> str:
    """The file name of workflow `ident` (file name or id) as GitHub knows it:
    from the default branch's tree, else 404. GitHub registers a workflow for
    `workflow_dispatch` and `GET .../actions/workflows/{id}` from the default
    branch ("This event will only trigger a workflow run if the workflow file
    exists on the default branch",
    https://docs.github.com/en/actions/reference/workflows-and-actions/events-that-trigger-workflows#workflow_dispatch;
    a workflow only on a feature branch answers 404: cli/cli#9781,
    benc-uk/workflow-dispatch#60). GitHub also dispatches a workflow it knows
    from an earlier run on another branch (github/docs#34884); ODW never relies
    on that, and the fake does not model it."""
    default = repo.git.sha(f"refs/heads/{repo.default_branch}")
    tree = f"{default}:.github/workflows"
    names = repo.git.git("ls-tree", "--name-only", tree, check=False) if default else ""
    for name in names.splitlines():
        if ident in (name, str(workflow_id(name))):
            return name
    raise error(404, "Not Found")


def _workflow(fake: FakeGitHub, repo: s.Repository, ident: str, sha: str) -> tuple[str, dict]:
    """The workflow known from the default branch, as its YAML reads at `sha`
    (the dispatched ref's copy is what runs); a ref without the file cannot be
    dispatched (422, as for a copy without the trigger:
    https://github.com/lasith-kg/dispatch-workflow/issues/152)."""
    name = known_workflow(repo, ident)
    blob = repo.git.show(sha, f".github/workflows/{name}")
    if blob is None:
        raise error(422, "Workflow does not have 'workflow_dispatch' trigger")
    return name, yaml.safe_load(blob) or {}


@route("GET", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}")
def get_workflow(fake: FakeGitHub, call: Call) -> Reply:
    """A workflow GitHub knows (from the default branch, `known_workflow`), else 404
    (https://docs.github.com/en/rest/actions/workflows#get-a-workflow)."""
    repo = repo_of(fake, call)
    name = known_workflow(repo, call.params["workflow_id"])
    default = repo.git.sha(f"refs/heads/{repo.default_branch}")
    doc = yaml.safe_load(repo.git.show(default or "", f".github/workflows/{name}") or b"") or {}
    return Reply(200, fake.shapes.workflow(repo, name, str(doc.get("name") or name)))


def _triggers(doc: dict) -> dict:
    on = doc.get("on", doc.get(True, {}))
    if isinstance(on, str):
        return {on: {}}
    if isinstance(on, list):
        return {k: {} for k in on}
    return on or {}


def _render(template: str, inputs: dict[str, str], ref: str) -> str:
    def value(match: re.Match[str]) -> str:
        expr = match.group(1).strip()
        if expr.startswith("inputs."):
            return inputs.get(expr[len("inputs.") :], "")
        if expr in ("github.ref_name", "github.head_ref"):
            return ref
        return ""

    return re.sub(r"\$\{\{(.*?)\}\}", value, template)


@route("POST", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches")
def dispatch(fake: FakeGitHub, call: Call) -> Reply:
    """The App dispatches (an installation token): the run's actor is the App's bot.
    `return_run_details` answers 200 with the run's id, else 204 with no body
    (https://docs.github.com/en/rest/actions/workflows#create-a-workflow-dispatch-event);
    GitHub Enterprise Server refuses the field."""
    repo = repo_of(fake, call)
    body = call.body
    if fake.ghes and "return_run_details" in body:
        raise error(422, 'Invalid request.\n\n"return_run_details" is not a permitted key.')
    given = {k: str(v) for k, v in (body.get("inputs") or {}).items()}
    run = create_run(fake, repo, call.params["workflow_id"], body["ref"], given, fake.bot_login)
    for hook in list(fake.on_dispatch):
        threading.Thread(target=hook, args=(run,), daemon=True).start()
    if body.get("return_run_details"):
        data = {
            "workflow_run_id": run.id,
            "run_url": f"{fake.api_url}/repos/{repo.full_name}/actions/runs/{run.id}",
            "html_url": f"{fake.host_url}/{repo.full_name}/actions/runs/{run.id}",
        }
        return Reply(200, data)
    return Reply(204)


def create_run(
    fake: FakeGitHub,
    repo: s.Repository,
    ident: str,
    ref: str,
    given: dict[str, str],
    actor: str,
) -> s.WorkflowRun:
    """A `workflow_dispatch` run of workflow `ident` (file name or id) at `ref`,
    started by `actor`, as GitHub checks it: the workflow at that ref must take
    `workflow_dispatch`, every input must be declared, required ones given and
    choices respected, else 422 and no run."""
    ref = ref.removeprefix("refs/heads/")
    sha = repo.git.sha(f"refs/heads/{ref}") or repo.git.sha(f"refs/tags/{ref}")
    if sha is None:
        raise error(422, f"No ref found for: {ref}")
    name, doc = _workflow(fake, repo, ident, sha)
    triggers = _triggers(doc)
    if "workflow_dispatch" not in triggers:
        raise error(422, "Workflow does not have 'workflow_dispatch' trigger")
    declared = (triggers["workflow_dispatch"] or {}).get("inputs") or {}
    for key in given:
        if key not in declared:
            raise error(422, f'Unexpected inputs provided: ["{key}"]')
    inputs = {}
    for key, spec in declared.items():
        spec = spec or {}
        value = given.get(key, "" if spec.get("default") is None else str(spec["default"]))
        if spec.get("required") and not value:
            raise error(422, f"Required input '{key}' not provided")
        if spec.get("type") == "choice" and value not in [str(o) for o in spec.get("options", [])]:
            raise error(
                422, f"Provided value '{value}' for input '{key}' not in the list of allowed values"
            )
        inputs[key] = value
    title = _render(str(doc.get("run-name") or doc.get("name") or name), inputs, ref)
    run = s.WorkflowRun(
        fake.next_id(),
        repo.full_name,
        name,
        workflow_id(name),
        str(doc.get("name") or name),
        title,
        ref,
        sha,
        inputs,
        "workflow_dispatch",
        fake.now(),
        actor=actor,
        triggering_actor=actor,
    )
    run.jobs.append(s.Job(fake.next_id(), "stage"))
    with fake.lock:
        fake.runs[run.id] = run
    fake.webhooks.send("workflow_run", "requested", run=run)
    return run


def dispatch_as(
    fake: FakeGitHub, login: str, full_name: str, workflow: str, ref: str, inputs: dict[str, str]
) -> s.WorkflowRun:
    """A person dispatches `workflow` (a file under `.github/workflows/`) on
    `ref` with `inputs`, as anyone with write access may
    (https://docs.github.com/en/rest/actions/workflows#create-a-workflow-dispatch-event
    needs write access; the Actions tab's "Run workflow" button the same).
    Their run is theirs to drive: the test starts it, uploads its artifacts
    (the person's own workflow can upload anything) and completes it."""
    repo = fake.repos[full_name]
    if repo.collaborators.get(login) not in ("write", "maintain", "admin"):
        # GitHub's answer to a dispatch without write access, as reported in
        # https://github.com/ACCESS-NRI/access-spack-packages/issues/30
        raise error(403, "Must have admin rights to Repository.")
    return create_run(fake, repo, workflow, ref, dict(inputs), login)


def run_of(fake: FakeGitHub, call: Call) -> s.WorkflowRun:
    repo = repo_of(fake, call)
    run = fake.runs.get(call.int("run_id"))
    if run is None or run.repo != repo.full_name:
        raise error(404, "Not Found")
    return run


@route("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}")
def get_run(fake: FakeGitHub, call: Call) -> Reply:
    return Reply(200, fake.shapes.workflow_run(run_of(fake, call)))


@route("GET", "/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs")
def list_runs(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    ident = call.params["workflow_id"]
    # A new run is listed only `run_visible_after` seconds after it was created:
    # GitHub's lists lag its writes (see `FakeGitHub.run_visible_after`).
    listed_before = fake.now() - fake.run_visible_after
    runs = [
        r
        for r in fake.runs.values()
        if r.repo == repo.full_name
        and ident in (r.workflow, str(r.workflow_id))
        and r.created_at <= listed_before
    ]
    for field, attr in (("branch", "ref"), ("event", "event"), ("status", "status")):
        if field in call.query:
            runs = [r for r in runs if getattr(r, attr) == call.query[field]]
    runs.sort(key=lambda r: -r.id)
    chunk, links = page(fake, call, runs)
    shown = [fake.shapes.workflow_run(r) for r in chunk]
    return Reply(200, {"total_count": len(runs), "workflow_runs": shown}, links)


@route("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs")
def list_jobs(fake: FakeGitHub, call: Call) -> Reply:
    run = run_of(fake, call)
    chunk, links = page(fake, call, run.jobs)
    jobs = [fake.shapes.job(run, j) for j in chunk]
    return Reply(200, {"total_count": len(run.jobs), "jobs": jobs}, links)


@route("GET", "/repos/{owner}/{repo}/actions/runs/{run_id}/artifacts")
def list_artifacts(fake: FakeGitHub, call: Call) -> Reply:
    """Paged; an artifact appears `fake.artifact_listing_delay` seconds after its
    upload. Right after a run completes GitHub may still list none of its
    artifacts, which show up moments later: reported in
    https://github.com/AndyGrant/OpenBench/issues/139 ("the jobs are listed as
    completed ... but the artifacts endpoint returns an empty list") and
    https://github.com/actions/upload-artifact/issues/53."""
    run = run_of(fake, call)
    now = fake.now()
    listed = [a for a in run.artifacts if a.created_at + fake.artifact_listing_delay <= now]
    chunk, links = page(fake, call, listed)
    items = [fake.shapes.artifact(run, a) for a in chunk]
    return Reply(200, {"total_count": len(listed), "artifacts": items}, links)


@route("GET", "/repos/{owner}/{repo}/actions/artifacts/{artifact_id}/{archive_format}")
def download_artifact(fake: FakeGitHub, call: Call) -> Reply:
    repo = repo_of(fake, call)
    artifact = fake.artifacts.get(call.int("artifact_id"))
    if artifact is None or fake.runs[artifact.run_id].repo != repo.full_name:
        raise error(404, "Not Found")
    if call.params["archive_format"] != "zip":
        raise error(404, "Not Found")
    if artifact.expired:
        # 410 Gone: the OpenAPI description's answer for an expired artifact
        # (https://docs.github.com/rest/actions/artifacts#download-an-artifact);
        # the message text is a belief, unchecked.
        raise error(410, "Artifact has expired")
    signature = secrets.token_urlsafe(16)
    with fake.lock:
        fake.storage[signature] = (artifact.id, fake.now() + STORAGE_TTL)
    return Reply(302, None, {"Location": f"{fake.storage_url}/{signature}"})


def storage(fake: FakeGitHub, request: Request) -> Response:
    """The signed-URL host: refuses an Authorization header, expires after a minute."""
    if request.headers.get("Authorization"):
        fake._violation(f"GET {request.path}: a token was sent to the artifact storage host")
        return Response("Authorization header is not allowed on a signed URL", 400)
    signature = request.path.rsplit("/", 1)[-1]
    entry = fake.storage.get(signature)
    if entry is None or entry[1] < fake.now():
        return Response("AuthenticationFailed: the signed URL expired", 403)
    artifact = fake.artifacts[entry[0]]
    return Response(artifact.data, 200, content_type="application/zip")


# -- what the runner side does (test controls) -----------------------------------------


def zip_files(files: dict[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def start_run(fake: FakeGitHub, run_id: int) -> None:
    run = fake.runs[run_id]
    with fake.lock:
        run.status = "in_progress"
        for job in run.jobs:
            job.status = "in_progress"
    fake.webhooks.send("workflow_run", "in_progress", run=run)
    for job in run.jobs:
        fake.webhooks.send("workflow_job", "in_progress", run=run, job=job)


def upload_artifact(fake: FakeGitHub, run_id: int, name: str, data: bytes) -> s.Artifact:
    run = fake.runs[run_id]
    artifact = s.Artifact(fake.next_id(), run_id, name, data, fake.now())
    with fake.lock:
        run.artifacts = [a for a in run.artifacts if a.name != name] + [artifact]
        fake.artifacts[artifact.id] = artifact
    return artifact


def expire_artifacts(fake: FakeGitHub, run_id: int) -> None:
    """The run's artifacts pass their retention (90 days by default): still
    listed, `expired: true`, and their download answers 410
    (https://docs.github.com/rest/actions/artifacts#download-an-artifact)."""
    with fake.lock:
        for artifact in fake.runs[run_id].artifacts:
            artifact.expired = True


def complete_run(fake: FakeGitHub, run_id: int, conclusion: str) -> None:
    run = fake.runs[run_id]
    with fake.lock:
        for job in run.jobs:
            job.status, job.conclusion = "completed", conclusion
        run.status, run.conclusion = "completed", conclusion
    for job in run.jobs:
        fake.webhooks.send("workflow_job", "completed", run=run, job=job)
    fake.webhooks.send("workflow_run", "completed", run=run)


def rerun(fake: FakeGitHub, run_id: int, by: str = "") -> None:
    """Re-run `run_id` (same id, next `run_attempt`); `by` ("" the bot) becomes
    its `triggering_actor`, its `actor` stays."""
    run = fake.runs[run_id]
    with fake.lock:
        run.triggering_actor = by
        run.run_attempt += 1
        run.status, run.conclusion = "queued", None
        run.artifacts = []
        for job in run.jobs:
            job.status, job.conclusion = "queued", None
    fake.webhooks.send("workflow_run", "requested", run=run)


def run_controls() -> dict[str, Any]:
    return {"start": start_run, "complete": complete_run, "rerun": rerun}
