"""The soak's audit counts an effect GitHub accepted twice, and only then."""

from __future__ import annotations

from typing import Any

import pytest

from tests.soak.audit import repeated_effects

R = "/repos/octo/soak-00/"


def merge(n: int, status: int = 200) -> dict[str, Any]:
    return {"method": "PUT", "path": f"{R}pulls/{n}/merge", "status": status, "body": {}}


def check(sha: str, name: str) -> dict[str, Any]:
    body = {"head_sha": sha, "name": name}
    return {"method": "POST", "path": f"{R}check-runs", "status": 201, "body": body}


def dispatch(tag: str) -> dict[str, Any]:
    body = {"ref": "roadmap-1-1", "inputs": {"task": "1.1", "tag": tag}}
    path = f"{R}actions/workflows/odw-stage.yml/dispatches"
    return {"method": "POST", "path": path, "status": 204, "body": body}


@pytest.mark.parametrize(
    ("log", "twice"),
    [
        ([merge(1), merge(2), check("a", "ODW · 1.1"), dispatch("t1"), dispatch("t2")], []),
        ([merge(1), merge(1, status=405), check("a", "x"), check("b", "x")], []),
        ([merge(1), merge(1)], ["merge octo/soak-00 pulls/1/merge x2"]),
        (
            [check("a", "ODW · run"), check("a", "ODW · run")],
            ["check run octo/soak-00 a ODW · run x2"],
        ),
        ([dispatch("t1"), dispatch("t1")], ["dispatch octo/soak-00 1.1 t1 x2"]),
    ],
    ids=["distinct", "refused-or-other-head", "merged-twice", "check-twice", "dispatched-twice"],
)
def test_repeated_effects_names_what_github_accepted_twice(
    log: list[dict[str, Any]], twice: list[str]
) -> None:
    assert repeated_effects(log) == twice
