"""GitHub's pagination, as every list route of the fake answers it.

`per_page` defaults to 30 and stops at 100; `page` counts from 1. A `Link`
header names the other pages, and GitHub writes those URLs by repository id,
not name: `https://api.github.com/repositories/{id}/issues?page=2`
(https://docs.github.com/rest/using-the-rest-api/using-pagination-in-the-rest-api;
recorded in @octokit/fixtures `paginate-issues`). The fake serves that
`/repositories/{id}/...` form too (`by_id`), so a client must follow the link
as given rather than rebuild it from the name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlencode

if TYPE_CHECKING:
    from tests.fakegithub.server import Call, FakeGitHub

T = TypeVar("T")
DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100
BY_ID = re.compile(r"^/repositories/(\d+)(/.*)?$")


def by_id(fake: FakeGitHub, path: str) -> str:
    """`/repositories/{id}/rest` as `/repos/{owner}/{name}/rest` (unknown ids unchanged)."""
    found = BY_ID.match(path)
    if found is None:
        return path
    number = int(found.group(1))
    for repo in list(fake.repos.values()):
        if repo.id == number:
            return f"/repos/{repo.full_name}{found.group(2) or ''}"
    return path


def _number(text: Any, default: int) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        return default


def page(fake: FakeGitHub, call: Call, items: Sequence[T]) -> tuple[list[T], dict[str, str]]:
    """The slice of `items` the call asks for, and GitHub's `Link` header for the rest."""
    per_page = min(max(_number(call.query.get("per_page"), DEFAULT_PER_PAGE), 1), MAX_PER_PAGE)
    number = max(_number(call.query.get("page"), 1), 1)
    last = max(1, math.ceil(len(items) / per_page))
    chunk = list(items[(number - 1) * per_page : number * per_page])
    parts = call.path.split("/")  # "", "repos", owner, name, rest...
    repo = fake.repos.get(f"{parts[2]}/{parts[3]}") if len(parts) > 3 else None
    if repo is None or last == 1:
        return chunk, {}
    base = f"{fake.api_url}/repositories/{repo.id}/" + "/".join(parts[4:])
    kept = {k: v for k, v in call.query.items() if k not in ("page", "per_page")}

    def url(n: int) -> str:
        return base + "?" + urlencode({**kept, "per_page": per_page, "page": n}, doseq=True)

    links = []
    if number > 1:
        links.append(f'<{url(number - 1)}>; rel="prev"')
    if number < last:
        links.append(f'<{url(number + 1)}>; rel="next"')
        links.append(f'<{url(last)}>; rel="last"')
    if number > 1:
        links.append(f'<{url(1)}>; rel="first"')
    return chunk, {"Link": ", ".join(links)}
