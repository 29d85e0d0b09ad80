"""The App manifest: `app.yml` read and turned into GitHub's manifest JSON.

`app/github/app.yml` is the file (installed with the package); the
repository root's `app.yml` links to it.

GitHub's registration flow takes `name`, `url`, `hook_attributes.url`,
`default_permissions`, `default_events` and `public`
(https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

# The one copy ships inside the package (package data), so an installed `odw`
# finds it; the repository root's `app.yml` is a symbolic link to it.
MANIFEST_PATH = Path(__file__).resolve().parent / "app.yml"
WEBHOOK_PATH = "/webhooks"


class ManifestError(ValueError):
    """app.yml is missing or malformed, or the URL is not usable; one line."""


def load(path: Path = MANIFEST_PATH) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(
            f"the App manifest {path} is missing: this installation of odw is incomplete "
            "(reinstall the odw package; a source checkout has it as app/github/app.yml)"
        ) from None
    except OSError as exc:
        raise ManifestError(f"cannot read the App manifest {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise ManifestError(f"{path} is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ManifestError(f"{path} must be a mapping")
    for key, kind in (("name", str), ("default_permissions", dict), ("default_events", list)):
        if not isinstance(data.get(key), kind):
            raise ManifestError(f"{path}: `{key}` must be a {kind.__name__}")
    return data


def public_url(url: str) -> str:
    """The service's public base URL: https (http only for loopback), no query."""
    parts = urlsplit(url.strip())
    local = parts.hostname in ("localhost", "127.0.0.1", "::1")
    if parts.scheme != "https" and not (parts.scheme == "http" and local):
        raise ManifestError(f"--url must be an https:// URL GitHub can reach, got {url!r}")
    if not parts.hostname or parts.query or parts.fragment or parts.username:
        raise ManifestError(
            f"--url must be a plain base URL such as https://odw.example.org, got {url!r}"
        )
    return url.strip().rstrip("/")


def manifest(url: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    """GitHub's manifest JSON for a service reachable at `url`."""
    spec = spec if spec is not None else load()
    base = public_url(url)
    out: dict[str, Any] = {
        "name": spec["name"],
        "url": base,
        "hook_attributes": {"url": base + WEBHOOK_PATH, "active": True},
        "public": bool(spec.get("public", False)),
        "default_permissions": dict(spec["default_permissions"]),
        "default_events": list(spec["default_events"]),
    }
    if spec.get("description"):
        out["description"] = spec["description"]
    return out
