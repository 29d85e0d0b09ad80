"""Workflow artifacts: list by run, download and unzip as untrusted input.

The zip URL answers 302 to a signed storage URL on another host; it is
followed without the Authorization header, so a token never reaches storage
(https://docs.github.com/en/rest/actions/artifacts#download-an-artifact).
The size is capped before reading and every zip entry is checked: no absolute
paths, no `..`, nothing but regular files and directories.
"""

from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path, PurePosixPath

import requests
from github import GithubException

from app.github.errors import GitHubError, UnsafeArtifact
from app.github.ports import Artifact
from app.github.transport import Transport

PERMISSIONS = {"actions": "read"}
MAX_ENTRIES = 1000


class GitHubArtifacts:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def list_artifacts(self, run_id: int) -> list[Artifact]:
        def fetch() -> list[Artifact]:
            items = self._t.paginate(f"/actions/runs/{run_id}/artifacts", "artifacts")
            return [Artifact(a["id"], a["name"], a["size_in_bytes"], a["expired"]) for a in items]

        return self._t.call("artifacts.list", fetch)

    def download_artifact(self, artifact: Artifact, dest: Path, max_bytes: int) -> list[Path]:
        """Unzip `artifact` under `dest` (checked) and return the files written."""
        if artifact.size_in_bytes > max_bytes:
            raise UnsafeArtifact(
                "artifacts.download",
                0,
                f"{artifact.name} is {artifact.size_in_bytes} bytes, over the {max_bytes} cap",
            )
        location = self._t.call("artifacts.locate", lambda: self._locate(artifact.id))
        data = self._t.call("artifacts.download", lambda: _fetch(location, max_bytes))
        return unzip_checked(data, dest, max_bytes)

    def _locate(self, artifact_id: int) -> str:
        status, headers, _ = self._t.github.requester.requestJson(
            "GET", self._t.path(f"/actions/artifacts/{artifact_id}/zip")
        )
        location = {k.lower(): v for k, v in headers.items()}.get("location")
        if status != 302 or not location:
            raise GithubException(status, None, headers)
        return str(location)


def _fetch(location: str, max_bytes: int) -> bytes:
    """GET the signed storage URL: no Authorization header, no further redirects."""
    with requests.get(location, stream=True, timeout=60, allow_redirects=False) as response:
        if response.status_code >= 400:
            raise GithubException(response.status_code, None, dict(response.headers))
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > max_bytes:
            raise UnsafeArtifact("artifacts.download", 0, f"{declared} bytes, over the cap")
        buffer = io.BytesIO()
        for chunk in response.iter_content(64 * 1024):
            buffer.write(chunk)
            if buffer.tell() > max_bytes:
                raise UnsafeArtifact("artifacts.download", 0, f"over the {max_bytes}-byte cap")
        return buffer.getvalue()


def _unsafe(reason: str) -> UnsafeArtifact:
    return UnsafeArtifact("artifacts.unzip", 0, reason)


def unzip_checked(data: bytes, dest: Path, max_bytes: int) -> list[Path]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise _unsafe("the artifact is not a zip file") from None
    entries = archive.infolist()
    if len(entries) > MAX_ENTRIES:
        raise _unsafe(f"{len(entries)} entries, over the {MAX_ENTRIES} cap")
    if sum(e.file_size for e in entries) > max_bytes:
        raise _unsafe(f"unpacks to more than the {max_bytes}-byte cap")
    for entry in entries:
        name = entry.filename
        path = PurePosixPath(name)
        mode = entry.external_attr >> 16
        if not path.parts or name.startswith(("/", "\\")) or ":" in path.parts[0]:
            raise _unsafe(f"entry {name!r} has an absolute path")
        if ".." in path.parts or "\\" in name:
            raise _unsafe(f"entry {name!r} escapes the artifact")
        if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise _unsafe(f"entry {name!r} is not a regular file (a link or device)")
    root = dest.resolve()
    written = []
    for entry in entries:
        target = (root / entry.filename).resolve()
        if not target.is_relative_to(root):
            raise _unsafe(f"entry {entry.filename!r} escapes the artifact")
        if entry.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(archive.read(entry))
        written.append(target)
    return written


__all__ = ["GitHubArtifacts", "GitHubError", "unzip_checked"]
