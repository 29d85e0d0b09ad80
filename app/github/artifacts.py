"""Workflow artifacts: list by run, download and unzip as untrusted input.

The zip URL answers 302 to a signed storage URL on another host; it is
followed without the Authorization header, so a token never reaches storage
(https://docs.github.com/en/rest/actions/artifacts#download-an-artifact).
The download is capped before and while reading. Nothing a zip header declares
is trusted: every entry is checked before anything is read (no absolute paths,
no `..`, nothing but regular files and directories, stored or deflated only),
the bytes each entry actually inflates to are counted against the cap as they
are read, so a header that understates a size costs no more than the cap, and
nothing is written unless every entry passes.
"""

from __future__ import annotations

import copy
import io
import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath

import requests
from github import GithubException

from app.github.errors import ArtifactExpired, GitHubError, UnsafeArtifact
from app.github.protocols import Artifact
from app.github.transport import Transport

PERMISSIONS = {"actions": "read"}
# A completed run's artifact list may still be empty for a moment (GitHub
# finalises artifacts after the run): read it again this many times, this far
# apart, before its absence counts (tests/fakegithub/README.md cites reports).
LISTING_READS = 5
LISTING_PAUSE = 2.0
MAX_ENTRIES = 1000
CHUNK = 64 * 1024
# actions/upload-artifact writes deflated (or stored) entries. zipfile inflates
# bzip2 and LZMA with no bound on one read's output, so those are refused unread.
METHODS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED})
# What zipfile raises on a damaged archive or entry (a bad CRC is BadZipFile).
CORRUPT = (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, ValueError)


class GitHubArtifacts:
    def __init__(self, transport: Transport) -> None:
        self._t = transport

    def list_artifacts(self, run_id: int) -> list[Artifact]:
        def fetch() -> list[Artifact]:
            items = self._t.paginate(f"/actions/runs/{run_id}/artifacts", "artifacts")
            return [Artifact(a["id"], a["name"], a["size_in_bytes"], a["expired"]) for a in items]

        return self._t.call("artifacts.list", fetch)

    def find_artifact(self, run_id: int, name: str) -> Artifact | None:
        """The completed run's artifact `name`, read again (`LISTING_READS` times,
        `LISTING_PAUSE` seconds apart) while the list lacks it; None when it never came."""
        for attempt in range(LISTING_READS):
            found = next((a for a in self.list_artifacts(run_id) if a.name == name), None)
            if found is not None:
                return found
            if attempt + 1 < LISTING_READS:
                self._t.ctx.sleeper.sleep(LISTING_PAUSE)
        return None

    def download_artifact(self, artifact: Artifact, dest: Path, max_bytes: int) -> list[Path]:
        """Unzip `artifact` under `dest` (checked) and return the files written."""
        if artifact.size_in_bytes > max_bytes:
            raise UnsafeArtifact(
                "artifacts.download",
                0,
                f"{artifact.name} is {artifact.size_in_bytes} bytes, over the {max_bytes} cap",
            )
        if artifact.expired:
            raise ArtifactExpired("artifacts.download", 410, f"{artifact.name} has expired")
        try:
            location = self._t.call("artifacts.locate", lambda: self._locate(artifact.id))
        except GitHubError as exc:
            if exc.status == 410:  # expired since it was listed
                raise ArtifactExpired(exc.operation, 410, f"{artifact.name} has expired") from None
            raise
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
    """Unzip `data` under `dest` and return the files written; nothing is written
    unless every entry passes, and at most `max_bytes` are ever inflated."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        entries = archive.infolist()
    except CORRUPT:
        raise _unsafe("the artifact is not a zip file") from None
    if len(entries) > MAX_ENTRIES:
        raise _unsafe(f"{len(entries)} entries, over the {MAX_ENTRIES} cap")
    for entry in entries:
        _check_entry(entry)
    contents: list[tuple[zipfile.ZipInfo, bytes]] = []
    budget = max_bytes
    for entry in entries:
        content = b"" if entry.is_dir() else _inflate(archive, entry, budget, max_bytes)
        budget -= len(content)
        contents.append((entry, content))
    root = dest.resolve()
    written = []
    for entry, content in contents:
        target = (root / entry.filename).resolve()
        if not target.is_relative_to(root):
            raise _unsafe(f"entry {_quoted(entry)} escapes the artifact")
        if entry.is_dir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
        written.append(target)
    return written


def _check_entry(entry: zipfile.ZipInfo) -> None:
    """Refuse an entry by its name, kind and coding, before anything is read."""
    name, quoted = entry.filename, _quoted(entry)
    path = PurePosixPath(name)
    mode = entry.external_attr >> 16
    if not path.parts or name.startswith(("/", "\\")) or ":" in path.parts[0]:
        raise _unsafe(f"entry {quoted} has an absolute path")
    if ".." in path.parts or "\\" in name:
        raise _unsafe(f"entry {quoted} escapes the artifact")
    if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise _unsafe(f"entry {quoted} is not a regular file (a link or device)")
    if entry.flag_bits & 0x1:
        raise _unsafe(f"entry {quoted} is encrypted")
    if entry.compress_type not in METHODS:
        raise _unsafe(f"entry {quoted} uses compression method {entry.compress_type}")


def _quoted(entry: zipfile.ZipInfo) -> str:
    """The entry's name for a message: quoted and clipped (a name may be 64 KiB)."""
    name = entry.filename
    return repr(name if len(name) <= 100 else name[:100] + "…")


def _inflate(archive: zipfile.ZipFile, entry: zipfile.ZipInfo, budget: int, cap: int) -> bytes:
    """The entry's bytes, inflated a chunk at a time and refused past `budget`.

    `read()` of a whole entry inflates all of it in one call before cutting it
    to the declared size (a 400 KB zip took a worker to 923 MB), and a bounded
    `read(CHUNK)` still stops at the declared size. So the entry is read as if
    it declared no size at all: the count of bytes actually inflated is the
    only stop, and the declared size is a claim checked against it afterwards.
    """
    quoted = _quoted(entry)
    undeclared = copy.copy(entry)
    undeclared.file_size = 1 << 62
    content = bytearray()
    try:
        with archive.open(undeclared) as stream:
            while chunk := stream.read(CHUNK):
                content += chunk
                if len(content) > budget:
                    raise _unsafe(
                        f"the artifact unpacks to more than the {cap}-byte cap at entry "
                        f"{quoted} (which declares {entry.file_size} bytes)"
                    )
    except CORRUPT as exc:
        raise _unsafe(f"entry {quoted} is corrupt ({exc})") from None
    if len(content) != entry.file_size:
        raise _unsafe(f"entry {quoted} declares {entry.file_size} bytes but holds {len(content)}")
    return bytes(content)


__all__ = ["GitHubArtifacts", "GitHubError", "unzip_checked"]
