"""The App itself: `GET /app`, and registering it from a manifest.

Registration is GitHub's manifest flow
(https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest):
a page POSTs a form field `manifest` (JSON) to `/settings/apps/new` or
`/organizations/ORG/settings/apps/new`, with `?state=...`; when the person
clicks **Create GitHub App**, GitHub redirects to the manifest's
`redirect_url` with `code` (and `state`); the code is exchanged with `POST
/app-manifests/{code}/conversions`, which answers 201 with the App's `id`,
`slug`, `pem`, `webhook_secret`, `client_id` and `client_secret`
(https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest).
"All three steps within one hour" is the docs' rule; that a code is good for
one exchange only is a belief (OAuth codes are), unchecked.

`new_app_form` stands in for the browser step: there is no page and no
button, the form's POST creates the App at once and answers the redirect.
The registered App becomes the fake's App (its id, slug, key and webhook
secret), so what the service does with the settings written from the
exchange is checked by the same fake.
"""

from __future__ import annotations

import json
import re
import secrets
from typing import Any
from urllib.parse import urlencode, urlsplit

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from werkzeug.wrappers import Request, Response

from tests.fakegithub.server import Call, FakeGitHub, Reply, error, route

CODE_LIFETIME = 3600
# The keys of "GitHub App Manifest parameters" in the docs above.
MANIFEST_KEYS = {
    "name", "url", "hook_attributes", "redirect_url", "callback_urls", "setup_url",
    "description", "public", "default_events", "default_permissions",
    "request_oauth_on_install", "setup_on_update",
}  # fmt: skip
FORM_PATH = re.compile(r"^/(?:organizations/(?P<org>[^/]+)/)?settings/apps/new$")


def is_form(path: str) -> bool:
    return FORM_PATH.match(path) is not None


def new_app_form(fake: FakeGitHub, request: Request) -> Response:
    """The person's click on **Create GitHub App**: validate the manifest as the
    docs describe it, keep it under a fresh code, redirect to `redirect_url`."""
    found = FORM_PATH.match(request.path)
    if request.method != "POST" or found is None:
        fake.record_violation(f"{request.method} {request.path}: the manifest flow POSTs a form")
        return Response("Not Found", 404)
    try:
        manifest = json.loads(request.form.get("manifest", ""))
    except ValueError:
        manifest = None
    problems = _manifest_problems(manifest)
    if problems:
        fake.record_violation(f"POST {request.path}: " + "; ".join(problems))
        return Response("; ".join(problems), 422)
    code = secrets.token_hex(20)
    with fake.lock:
        fake.manifest_codes[code] = (dict(manifest), found.group("org"), fake.now())
    query = {"code": code}
    if "state" in request.args:
        query["state"] = request.args["state"]
    return Response("", 302, {"Location": f"{manifest['redirect_url']}?{urlencode(query)}"})


def _manifest_problems(manifest: Any) -> list[str]:
    if not isinstance(manifest, dict):
        return ["the form field `manifest` is not a JSON object"]
    problems = [f"`{k}` is not a manifest parameter" for k in sorted(set(manifest) - MANIFEST_KEYS)]
    if not isinstance(manifest.get("url"), str):
        problems.append("`url` is required")
    hook = manifest.get("hook_attributes")
    if hook is not None and not (isinstance(hook, dict) and isinstance(hook.get("url"), str)):
        problems.append("`hook_attributes.url` is required")
    redirect = manifest.get("redirect_url")
    if not isinstance(redirect, str) or urlsplit(redirect).scheme not in ("http", "https"):
        problems.append("`redirect_url` must be a full URL (without it no code comes back)")
    if not isinstance(manifest.get("name"), str) or not manifest["name"].strip():
        problems.append("`name` is required (the form asks for it when missing)")
    return problems


def _slug(name: str) -> str:
    """GitHub's slug for an App's name: lower case, runs of other characters as `-`."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


@route("POST", "/app-manifests/{code}/conversions")
def convert(fake: FakeGitHub, call: Call) -> Reply:
    """The exchange: no credentials, the code is the secret; 404 for a code
    unknown, used or older than an hour."""
    with fake.lock:
        held = fake.manifest_codes.pop(call.params["code"], None)
    if held is None or fake.now() - held[2] > CODE_LIFETIME:
        raise error(404, "Not Found")
    manifest, org, _ = held
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,  # GitHub's is "BEGIN RSA PRIVATE KEY"
        serialization.NoEncryption(),
    ).decode()
    webhook_secret = secrets.token_hex(20)
    slug = _slug(manifest["name"])
    fake.become_app(fake.next_id(), slug, key, webhook_secret)
    data = _app_shape(fake, manifest["name"], org or "octocat")
    data.update(
        permissions=dict(manifest.get("default_permissions") or {}),
        events=list(manifest.get("default_events") or []),
        client_id=f"Iv1.{secrets.token_hex(8)}",
        client_secret=secrets.token_hex(20),
        webhook_secret=webhook_secret,
        pem=pem,
    )
    return Reply(201, data)


@route("GET", "/app")
def authenticated_app(fake: FakeGitHub, call: Call) -> Reply:
    """The App the JWT was signed for
    (https://docs.github.com/rest/apps/apps#get-the-authenticated-app)."""
    return Reply(200, _app_shape(fake, fake.app_name, "octocat"))


def _app_shape(fake: FakeGitHub, name: str, owner: str) -> dict[str, Any]:
    data: dict[str, Any] = fake.shapes.example("integration")
    data.update(
        id=fake.app_id,
        slug=fake.app_slug,
        node_id=f"A_{fake.app_id}",
        name=name,
        html_url=f"{fake.host_url}/apps/{fake.app_slug}",
    )
    if isinstance(data.get("owner"), dict):
        data["owner"]["login"] = owner
    data.pop("client_secret", None)
    data.pop("webhook_secret", None)
    data.pop("pem", None)
    return data
