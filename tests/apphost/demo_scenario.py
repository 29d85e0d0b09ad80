"""What `make demo ARGS=...` rehearses: a maintainer's own roadmap, `.github/odw.yml`,
extra repository files, agent script and comments, read and checked before
anything starts, so a typo costs one line of error rather than a run."""

from __future__ import annotations

import argparse
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests import browser
from tests.apphost.harness import ODW_YML, sample_files
from tests.needs import CHROMIUM, message

# A repository role, as GitHub names them in "Repository roles for an
# organization" and the collaborators API's `permission` values
# (https://docs.github.com/en/rest/collaborators/collaborators#add-a-repository-collaborator).
PERMISSIONS = ("read", "triage", "write", "maintain", "admin")
# GitHub logins: alphanumerics and single inner hyphens, at most 39 characters.
LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")


class ScenarioError(Exception):
    """Input the maintainer can fix; printed as one line, exit status 2."""


@dataclass(frozen=True)
class Comment:
    """`--comment LOGIN:PERMISSION:TEXT`: TEXT posted by LOGIN, a collaborator with PERMISSION."""

    login: str
    permission: str
    text: str


@dataclass
class Scenario:
    roadmap: str
    files: dict[str, str]
    agent_script: Path | None = None
    comments: list[Comment] = field(default_factory=list)
    request_log: Path | None = None
    keep: Path | None = None
    dashboard_shot: Path | None = None  # a PNG of the run's dashboard page, saved at the end


def parse_comment(value: str) -> Comment:
    login, sep, rest = value.partition(":")
    permission, sep2, text = rest.partition(":")
    if not (sep and sep2):
        raise ScenarioError(f"--comment {value!r}: expected LOGIN:PERMISSION:TEXT")
    if not LOGIN.match(login):
        raise ScenarioError(f"--comment {value!r}: {login!r} is not a GitHub login")
    if permission not in PERMISSIONS:
        raise ScenarioError(
            f"--comment {value!r}: unknown permission {permission!r} "
            f"(one of {', '.join(PERMISSIONS)})"
        )
    if not text.strip():
        raise ScenarioError(f"--comment {value!r}: the comment's text is empty")
    return Comment(login, permission, text.replace("\\n", "\n"))


def _read(option: str, path: Path) -> str:
    if not path.is_file():
        raise ScenarioError(f"{option} {path}: no such file")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"{option} {path}: cannot read it as UTF-8 text: {exc}") from None


def _tree(root: Path) -> dict[str, str]:
    """The files under `root` (not `.git`), by repository path."""
    if not root.is_dir():
        raise ScenarioError(f"--files {root}: no such directory")
    found: dict[str, str] = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if p.is_file() and ".git" not in rel.parts:
            found[rel.as_posix()] = _read("--files", p)
    return found


def scenario_from(args: argparse.Namespace, default_roadmap: str) -> Scenario:
    """The repository's files: the sample's, then `--files`, then `--roadmap` and
    `--config` (each named file wins over what came before it)."""
    roadmap = _read("--roadmap", args.roadmap) if args.roadmap else default_roadmap
    files = sample_files(roadmap, ODW_YML)
    if args.files is not None:
        files.update(_tree(args.files))
        roadmap = files["docs/roadmap.md"] if args.roadmap is None else roadmap
    files["docs/roadmap.md"] = roadmap
    if args.config is not None:
        # Kept as written: a config ODW refuses is worth rehearsing (`ODW · config`).
        files[".github/odw.yml"] = _read("--config", args.config)
    if args.agent_script is not None:
        _check_agent_script(_read("--agent-script", args.agent_script), args.agent_script)
    if args.request_log is not None:
        _start_log(args.request_log)
    shot = getattr(args, "dashboard_shot", None)
    if shot is not None:
        _check_shot(shot)
    if args.keep is not None and args.keep.exists():
        if not args.keep.is_dir():
            raise ScenarioError(f"--keep {args.keep}: exists and is not a directory")
        if any(args.keep.iterdir()):
            raise ScenarioError(f"--keep {args.keep}: not empty (an earlier rehearsal?)")
    return Scenario(
        roadmap=roadmap,
        files=files,
        agent_script=args.agent_script.resolve() if args.agent_script else None,
        comments=[parse_comment(c) for c in args.comment],
        request_log=args.request_log.resolve() if args.request_log else None,
        keep=args.keep,
        dashboard_shot=shot.resolve() if shot is not None else None,
    )


def _check_shot(path: Path) -> None:
    """Checked before anything runs: a rehearsal is too long to fail at its last step."""
    if path.suffix.lower() != ".png":
        raise ScenarioError(f"--dashboard-shot {path}: a screenshot is a .png file")
    if not path.parent.is_dir():
        raise ScenarioError(f"--dashboard-shot {path}: its directory does not exist")
    if not browser.available():
        raise ScenarioError(f"--dashboard-shot needs a browser: {message(CHROMIUM)}")


def _start_log(path: Path) -> None:
    """An empty request log, so it holds this rehearsal's requests only."""
    if not path.parent.is_dir():
        raise ScenarioError(f"--request-log {path}: its directory does not exist")
    try:
        path.write_text("")
    except OSError as exc:
        raise ScenarioError(f"--request-log {path}: cannot write it: {exc.strerror}") from None


def _check_agent_script(text: str, path: Path) -> None:
    """The scripted agent reads a JSON object of task -> stage -> words
    (examples/agents/scripted_agent.py); anything else would crash every stage."""
    try:
        script: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ScenarioError(f"--agent-script {path}: not JSON: {exc}") from None
    if not isinstance(script, dict) or not all(
        isinstance(stages, dict)
        and all(isinstance(w, list) and all(isinstance(x, str) for x in w) for w in stages.values())
        for stages in script.values()
    ):
        raise ScenarioError(
            f"--agent-script {path}: expected an object such as "
            '{"1.1": {"implement": ["exit:3", "pass"]}}'
        )


def config_text(files: dict[str, str]) -> str:
    """The gates the repository's `.github/odw.yml` names, for the opening lines."""
    try:
        data = yaml.safe_load(files.get(".github/odw.yml", "")) or {}
    except yaml.YAMLError:
        return "(not valid YAML)"
    gates = data.get("gates") if isinstance(data, dict) else None
    return ", ".join(f"`{g}`" for g in gates) if isinstance(gates, list) else "(none)"


def target_task(results: list[dict[str, Any]]) -> str | None:
    """The task whose pull request the comments go to: the first that failed, else the first."""
    failed = [t["id"] for t in results if t.get("status") == "failed"]
    if failed:
        return str(failed[0])
    return str(results[0]["id"]) if results else None
