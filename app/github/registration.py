"""Registering the App with GitHub's manifest flow
(https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest).

A page POSTs the manifest (`app.github.manifest`) as the form field
`manifest` to GitHub's "new App" form with a `state`; after the person clicks
**Create GitHub App**, GitHub redirects to the manifest's `redirect_url` with
`code` and `state`; `exchange` trades the code for the App's id, slug, key and
webhook secret (`POST /app-manifests/{code}/conversions`, no credentials: the
code is the secret, good for an hour). What it returns is written as
settings by `settings_text`.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import requests

from app.service_settings import DEFAULT_API_URL

DEFAULT_WEB_URL = "https://github.com"
TIMEOUT = 30


class RegistrationError(Exception):
    """The exchange failed; the message is one line."""


@dataclass(frozen=True, repr=False)
class RegisteredApp:
    app_id: int
    slug: str
    name: str
    webhook_secret: str
    pem: str

    def __repr__(self) -> str:  # the key and secret never reach a log line
        return f"RegisteredApp(app_id={self.app_id}, slug={self.slug!r})"


def form_url(web_url: str, org: str | None, state: str) -> str:
    """GitHub's "new App" form: an organisation's, or the signed-in person's."""
    where = f"/organizations/{quote(org, safe='')}" if org else ""
    return f"{web_url}{where}/settings/apps/new?state={quote(state, safe='')}"


def install_url(web_url: str, slug: str) -> str:
    return f"{web_url}/apps/{quote(slug, safe='')}/installations/new"


def form_page(action: str, manifest: dict[str, Any]) -> str:
    """The local page: one form holding the manifest, submitted on load (the
    button is there when scripts are off)."""
    value = html.escape(json.dumps(manifest), quote=True)
    name = html.escape(str(manifest.get("name", "")))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Register {name}</title></head>
<body>
<h1>Register the GitHub App {name}</h1>
<p>GitHub's form opens with the App's name, webhook URL, permissions and events
filled in. Check them and click <b>Create GitHub App</b>; GitHub then sends you back
here and <code>odw app register</code> writes the App's settings.</p>
<form id="register" action="{html.escape(action, quote=True)}" method="post">
<input type="hidden" name="manifest" value="{value}">
<button type="submit">Continue to GitHub</button>
</form>
<script>document.getElementById("register").submit()</script>
</body></html>
"""


def done_page(title: str, text: str, link: str | None = None) -> str:
    anchor = ""
    if link:
        anchor = f'<p><a href="{html.escape(link, quote=True)}">{html.escape(link)}</a></p>'
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}'
        f"</title></head><body><h1>{html.escape(title)}</h1><p>{html.escape(text)}</p>"
        f"{anchor}</body></html>\n"
    )


def exchange(api_url: str, code: str) -> RegisteredApp:
    """Trade the flow's `code` for the App
    (https://docs.github.com/rest/apps/apps#create-a-github-app-from-a-manifest)."""
    url = f"{api_url}/app-manifests/{quote(code, safe='')}/conversions"
    try:
        answer = requests.post(
            url,
            headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"},
            timeout=TIMEOUT,
        )
    except requests.RequestException as exc:
        raise RegistrationError(f"cannot reach {api_url}: {type(exc).__name__}") from None
    if answer.status_code != 201:
        try:
            message = str(answer.json().get("message", ""))
        except ValueError:
            message = ""
        raise RegistrationError(
            f"GitHub answered {answer.status_code} {message or answer.reason} to the code "
            "exchange (a code is good for one hour and one exchange): run `odw app register` again"
        )
    try:
        data = answer.json()
        app = RegisteredApp(
            int(data["id"]), str(data["slug"]), str(data["name"]),
            str(data["webhook_secret"] or ""), str(data["pem"]),
        )  # fmt: skip
    except (ValueError, KeyError, TypeError) as exc:
        raise RegistrationError(f"GitHub's answer to the code exchange lacks {exc}") from None
    if not app.webhook_secret:
        raise RegistrationError(
            f"GitHub registered the App {app.slug} (id {app.app_id}) without a webhook secret: "
            "set one in the App's settings on GitHub and in ODW_WEBHOOK_SECRET"
        )
    return app


def _quoted(value: str) -> str:
    """A double-quoted value as dotenv files read it (python-dotenv, Docker
    Compose's `env_file`): backslash, quote and newline escaped."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def settings_values(app: RegisteredApp, api_url: str) -> dict[str, str]:
    """The `ODW_*` settings `odw serve` needs for `app`: the API root only when
    it is not github.com's."""
    values = {
        "ODW_APP_ID": str(app.app_id),
        "ODW_WEBHOOK_SECRET": app.webhook_secret,
        "ODW_PRIVATE_KEY": app.pem,
    }
    if api_url != DEFAULT_API_URL:
        values["ODW_GITHUB_API_URL"] = api_url
    return values


def settings_text(app: RegisteredApp, api_url: str, web_url: str) -> str:
    lines = [
        f"# The GitHub App {app.name!r} ({web_url}/apps/{app.slug}), written by "
        "`odw app register`.",
        "# Secrets: keep this file private (mode 0600) and out of version control.",
        "# The service reads it with ODW_ENV_FILE=<this file> odw serve; the App's",
        f"# slug ({app.slug}) is read from GitHub when the service starts.",
    ]
    lines += [f"{k}={_quoted(v)}" for k, v in settings_values(app, api_url).items()]
    return "\n".join(lines) + "\n"
