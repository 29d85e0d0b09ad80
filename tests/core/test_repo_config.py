"""The one reader of `.github/odw.yml`: every problem names the file, the field and the line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from app.core.repo_config import (
    CONFIG_PATH,
    MAX_CONFIG_BYTES,
    ConfigProblem,
    RepoConfig,
    read_repo_config,
)

ROOT = Path(__file__).resolve().parents[2]


def _problem(text: str | bytes, source: str = CONFIG_PATH) -> ConfigProblem:
    with pytest.raises(ConfigProblem) as caught:
        read_repo_config(text, source)
    return caught.value


@pytest.mark.parametrize(
    ("text", "field", "line"),
    [
        ("agent: x\n\nconfig:\n  stageAttempts: 3\n  maxParallel: 0\n", "config.maxParallel", 5),
        ("# the agent\nagent: x\nintegration: rebase\n", "integration", 3),
        ("agent: x\ngates:\n  - make test\n  - [lint]\n", "gates.1", 4),
        ("agent: x\ncommandPermission: write\nallowedBots:\n  - a[bot]\n  - mona\n",
         "allowedBots", 3),
        ("agent: x\nidentity:\n  name: bot\n  email: nobody\n", "identity.email", 4),
    ],
    ids=["nested-field", "after-a-comment", "list-item", "whole-list", "nested-model"],
)  # fmt: skip
def test_a_bad_field_names_the_file_the_field_and_its_line(
    text: str, field: str, line: int
) -> None:
    problem = _problem(text, ".github/odw.yml on origin/trunk")
    assert (problem.path, problem.field, problem.line) == (
        ".github/odw.yml on origin/trunk",
        field,
        line,
    )
    assert str(problem).startswith(f".github/odw.yml on origin/trunk, line {line}: {field}: ")


def test_a_yaml_syntax_error_names_its_line() -> None:
    problem = _problem("agent: x\ngates:\n  - make\n  - [unclosed\nbase: main\n")
    assert problem.path == CONFIG_PATH and problem.field == ""
    assert problem.line == 5  # where the parser found the flow sequence unfinished
    assert problem.message.startswith("not valid YAML: ")


def test_a_tab_indent_is_a_syntax_error_on_its_line() -> None:
    problem = _problem("agent: x\nconfig:\n\tmaxParallel: 2\n")
    assert (problem.field, problem.line) == ("", 3)


@pytest.mark.parametrize(
    ("text", "line"),
    [("- agent: x\n", 1), ("# a list, not a mapping\n\n- x\n", 3), ("just words\n", 1)],
    ids=["list", "list-after-comments", "scalar"],
)
def test_a_document_that_is_not_a_mapping_is_a_clear_error(text: str, line: int) -> None:
    problem = _problem(text)
    assert (problem.field, problem.line, problem.message) == (
        "",
        line,
        "expected a mapping at the top level",
    )


@pytest.mark.parametrize(
    "text",
    [None, "", b"", "\n\n", "# nothing set yet\n"],
    ids=["no-file", "empty", "empty-bytes", "blank-lines", "comment-only"],
)
def test_no_file_and_an_empty_document_mean_the_defaults(text: str | bytes | None) -> None:
    # As before the one reader: the App, local mode and `odw stage --config`
    # all took an empty file as "nothing set" (the fake runner writes one).
    assert read_repo_config(text) == RepoConfig()


def test_bytes_and_text_read_alike() -> None:
    text = "agent: codex --full-auto\ngates: [make test]\nconfig:\n  maxParallel: 3\n"
    config = read_repo_config(text.encode())
    assert config == read_repo_config(text)
    assert (config.agent, config.gates, config.config.max_parallel) == (
        "codex --full-auto",
        ["make test"],
        3,
    )


def test_a_file_over_the_cap_is_refused_before_parsing() -> None:
    problem = _problem(b"agent: x\n" + b"#" * MAX_CONFIG_BYTES)
    assert problem.message == f"larger than {MAX_CONFIG_BYTES} bytes"
    assert read_repo_config(b"agent: x\n" + b"#" * (MAX_CONFIG_BYTES - 10)).agent == "x"


def test_deep_nesting_is_a_clear_error_not_a_traceback() -> None:
    problem = _problem("config: " + "[" * 5000)
    assert problem.field == "" and "nested too deeply" in problem.message


def test_only_the_core_reader_parses_yaml() -> None:
    """One place parses `.github/odw.yml`: no other module of ODW imports a YAML
    parser, except the App manifest's loader (`app.yml`, not a repository file)."""
    readers = set()
    for package in ("app", "actions", "webhooks"):
        for path in (ROOT / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = (
                    [a.name for a in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom)
                    else []
                )
                if any(n == "yaml" or n.startswith("yaml.") for n in names):
                    readers.add(path.relative_to(ROOT).as_posix())
    assert readers == {"app/core/repo_config.py", "app/github/manifest.py"}
