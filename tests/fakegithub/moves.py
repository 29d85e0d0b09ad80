"""Renamed and transferred repositories: the new name serves, the old one redirects.

GitHub keeps answering a repository's old name after a rename or a transfer
(https://developer.github.com/changes/2015-04-17-preview-repository-redirects/,
"301 or 307 HTTP redirect, depending on the type of request being made";
https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#follow-redirects):

- REST: a GET or HEAD on `/repos/{old}/...` answers 301, any other method 307,
  both with `Location` at `/repositories/{id}/...` and the body
  `{"message": "Moved Permanently", "url": <location>, "documentation_url": ...}`
  (bodies recorded from api.github.com in 18F/charlie#85 and mislav/hub#2449;
  the id form in Stack Overflow question 28863131). `/repositories/{id}/...`
  serves the repository under its current name.
- git smart HTTP: the old URL answers 301 to the new one (git follows the first
  request's redirect and uses the new URL for the rest of the exchange).
- The installation keeps the repository, and tokens made for it keep working:
  GitHub grants a token to repositories, not to names.
"""

from __future__ import annotations

import re
import shutil
from typing import TYPE_CHECKING, Any

from werkzeug.wrappers import Response

if TYPE_CHECKING:
    from tests.fakegithub.server import FakeGitHub

_REPO_PATH = re.compile(r"^/repos/(?P<owner>[^/]+)/(?P<name>[^/]+)(?P<rest>/.*)?$")
_ID_PATH = re.compile(r"^/repositories/(?P<id>\d+)(?P<rest>/.*)?$")
DOCUMENTATION = "https://developer.github.com/v3/#http-redirects"  # as recorded


def rename(fake: FakeGitHub, old: str, new: str) -> None:
    """Rename (or, with another owner, transfer) `old` to `new`, as on github.com."""
    from tests.fakegithub import push_rules

    if new in fake.repos:
        raise ValueError(f"{new} exists already")
    with fake.lock:
        repo = fake.repos.pop(old)
        owner, name = new.split("/")
        path = fake.root / owner / f"{name}.git"
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(str(repo.git.path), path)
        repo.git.path = path
        repo.owner, repo.name = owner, name
        fake.repos[new] = repo
        fake.moved[old] = repo.id
        for installation in fake.installations.values():
            installation.repositories = _renamed(installation.repositories, old, new)
        for token in fake.tokens.values():
            if token.repositories is not None:
                token.repositories = _renamed(token.repositories, old, new)
        for (full, number), pull in list(fake.pulls.items()):
            if full == old:
                del fake.pulls[(full, number)]
                pull.repo = new
                fake.pulls[(new, number)] = pull
        records: list[Any] = [
            *fake.comments.values(),
            *fake.check_runs.values(),
            *fake.runs.values(),
        ]
        for record in records:
            if record.repo == old:
                record.repo = new
    push_rules.install(repo, fake.host_url)


def _renamed(names: list[str], old: str, new: str) -> list[str]:
    return [new if n == old else n for n in names]


def current_path(fake: FakeGitHub, path: str) -> str:
    """`/repositories/{id}/...` as `/repos/{owner}/{name}/...` (unchanged otherwise)."""
    found = _ID_PATH.match(path)
    if found is None:
        return path
    repo_id = int(found["id"])
    for repo in fake.repos.values():
        if repo.id == repo_id:
            return f"/repos/{repo.full_name}{found['rest'] or ''}"
    return path


def redirect(fake: FakeGitHub, method: str, path: str, query: str) -> tuple[int, Any, str] | None:
    """GitHub's answer to a request on an old name: (status, body, location), or None."""
    found = _REPO_PATH.match(path)
    if found is None:
        return None
    old = f"{found['owner']}/{found['name']}"
    if old in fake.repos or old not in fake.moved:
        return None
    location = f"{fake.api_url}/repositories/{fake.moved[old]}{found['rest'] or ''}"
    if query:
        location += "?" + query
    status = 301 if method in ("GET", "HEAD") else 307
    body = {"message": "Moved Permanently", "url": location, "documentation_url": DOCUMENTATION}
    return status, body, location


def git_redirect(fake: FakeGitHub, full: str, tail: str, query: str) -> Response | None:
    """The old name's git URL answers 301 to the new one."""
    if full in fake.repos or full not in fake.moved:
        return None
    for repo in fake.repos.values():
        if repo.id == fake.moved[full]:
            location = f"{fake.git_url(repo.full_name)}/{tail}" + (f"?{query}" if query else "")
            return Response("Moved Permanently", 301, {"Location": location})
    return None
