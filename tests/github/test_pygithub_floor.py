"""The installed PyGithub takes every call `app/github` makes.

`pyproject.toml` allowed PyGithub 2.4 while the dispatch passed
`return_run_details`, which `Workflow.create_dispatch` takes from 2.10 on
(PyGithub's "Add `return_run_details` parameter to
`Workflow.create_dispatch`", #3471, released in 2.10.0): on 2.4 to 2.9 every
dispatch raised `TypeError`. Each call in `app.github.pygithub_calls` is bound
against the installed release, and the table is checked to name every PyGithub
call the package's source makes, so a new call cannot pass unchecked. Run with
the oldest PyGithub the floor allows, this is the proof the floor is right.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from typing import Any

import pytest

from app.github.pygithub_calls import ATTRIBUTES, CALLS, PyGithubCall
from tests.conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "app" / "github"
# Classes whose methods `app/github` calls; a called name that is one of their
# public methods must have a row in CALLS.
PYGITHUB_CLASSES = (
    "github.MainClass.Github",
    "github.Repository.Repository",
    "github.Workflow.Workflow",
    "github.Issue.Issue",
    "github.IssueComment.IssueComment",
    "github.PullRequest.PullRequest",
    "github.Requester.Requester",
)
# Receivers in `app/github` that share a method name with PyGithub but are ODW's own.
OURS = {"AppCredentials"}


def _resolve(dotted: str) -> Any:
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            found: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            found = getattr(found, name)
        return found
    raise ImportError(dotted)


def _bind(call: PyGithubCall) -> None:
    target = _resolve(call.target)
    signature = inspect.signature(target)
    args: list[object] = [object()] * call.positional
    if not inspect.isclass(target):
        args.insert(0, object())  # self
    signature.bind(*args, **{name: object() for name in call.keywords})


@pytest.mark.parametrize("call", CALLS, ids=lambda c: f"{c.target}:{','.join(c.keywords)}")
def test_the_installed_pygithub_takes_each_call_with_its_arguments(call: PyGithubCall) -> None:
    try:
        _bind(call)
    except (TypeError, AttributeError, ImportError) as exc:
        raise AssertionError(
            f"{call.target} as {call.where} calls it: {exc} (raise PyGithub's floor in "
            "pyproject.toml to the release that has it)"
        ) from None


@pytest.mark.parametrize(("owner", "names"), ATTRIBUTES, ids=[a for a, _ in ATTRIBUTES])
def test_the_installed_pygithub_has_each_attribute_read(owner: str, names: tuple[str, ...]) -> None:
    cls = _resolve(owner)
    assert [n for n in names if not hasattr(cls, n)] == []


def test_an_argument_pygithub_does_not_take_is_caught() -> None:
    """The check can fail: a keyword no release has is refused."""
    with pytest.raises(TypeError):
        _bind(PyGithubCall("github.Workflow.Workflow.create_dispatch", 2, ("return_run_id",)))


def _method_names() -> set[str]:
    names: set[str] = set()
    for dotted in PYGITHUB_CLASSES:
        names |= {n for n, v in vars(_resolve(dotted)).items() if callable(v) and n[0] != "_"}
    return names


def test_the_table_names_every_pygithub_call_app_github_makes() -> None:
    methods = _method_names()
    listed = {c.target.rsplit(".", 1)[-1] for c in CALLS}
    unlisted = []
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text())
        imported = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("github")
            for alias in node.names
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in methods:
                receiver = ast.unparse(func.value)
                if receiver not in OURS and func.attr not in listed:
                    unlisted.append(f"{path.name}:{node.lineno} {receiver}.{func.attr}")
            elif isinstance(func, ast.Name) and func.id in imported and func.id not in listed:
                unlisted.append(f"{path.name}:{node.lineno} {func.id}(...)")
    assert unlisted == [], "add these to app/github/pygithub_calls.py"


def test_the_floor_in_pyproject_is_a_release_with_every_call() -> None:
    """The floor is at least 2.10, the first release with `return_run_details`."""
    text = (REPO_ROOT / "pyproject.toml").read_text()
    found = re.search(r'"PyGithub>=(\d+)\.(\d+)', text)
    assert found is not None, "pyproject.toml names no PyGithub floor"
    assert (int(found.group(1)), int(found.group(2))) >= (2, 10)
