"""`odw init`: write the stage workflow, a `.github/odw.yml` and, when there is
none, a starter `docs/roadmap.md`.

Nothing is overwritten without `--force`, and nothing at all is written when
any target exists, so a refusal leaves the repository exactly as it was. A
roadmap is the repository's own work: it is written only when missing, never
overwritten, `--force` or not.
"""

from __future__ import annotations

import argparse
import re
from importlib import resources
from pathlib import Path

from app import __version__
from app.cli.commands import command_help
from app.cli.errors import UsageError, UserError

WORKFLOW_PATH = ".github/workflows/odw-stage.yml"
CONFIG_PATH = ".github/odw.yml"
ROADMAP_PATH = "docs/roadmap.md"
# The stage action is this repository's action.yml, published by whoever runs
# the App (README: "Publish the stage action"); there is no reference that
# works for everyone, so none is assumed.
ACTION_EXAMPLE = f"OWNER/odw@v{__version__}"
DEFAULT_TIMEOUT_MINUTES = 120
_ACTION_REF = re.compile(
    r"^(?:\./[A-Za-z0-9._/-]*|[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+(?:/[A-Za-z0-9._/-]+)?"
    r"@[A-Za-z0-9._/-]+)$"
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "init",
        help=command_help("init"),
        description=f"Write {WORKFLOW_PATH}, {CONFIG_PATH} and, when missing, "
        f"{ROADMAP_PATH} into a repository.",
    )
    p.add_argument("--path", default=".", type=Path, metavar="DIR", help="repository root")
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    p.add_argument(
        "--action",
        metavar="REF",
        help=f"the ODW stage action you published, as owner/repo@ref ({ACTION_EXAMPLE}), or ./path",
    )
    p.add_argument(
        "--timeout-minutes",
        type=int,
        default=DEFAULT_TIMEOUT_MINUTES,
        metavar="N",
        help="job timeout",
    )
    p.set_defaults(func=run_init)


def render_workflow(action: str | None, timeout_minutes: int) -> str:
    if action is None:
        raise UsageError(
            f"--action is required: the ODW stage action you published, such as "
            f"--action {ACTION_EXAMPLE} (README: Publish the stage action)"
        )
    if not _ACTION_REF.match(action):
        raise UsageError(f"--action {action!r} is not owner/repo@ref or ./path")
    if not 1 <= timeout_minutes <= 360:
        raise UsageError("--timeout-minutes must be between 1 and 360")
    text = _template("odw-stage.yml")
    return text.replace("__ACTION__", action).replace("__TIMEOUT__", str(timeout_minutes))


def _template(name: str) -> str:
    return resources.files("actions").joinpath("templates", name).read_text("utf-8")


def run_init(args: argparse.Namespace) -> int:
    root: Path = args.path
    if not root.is_dir():
        raise UserError(f"{root} is not a directory")
    files = {
        WORKFLOW_PATH: render_workflow(args.action, args.timeout_minutes),
        CONFIG_PATH: _template("odw.yml"),
    }
    existing = [rel for rel in files if (root / rel).exists() or (root / rel).is_symlink()]
    if existing and not args.force:
        raise UserError(
            f"{', '.join(existing)} already exist{'s' if len(existing) == 1 else ''}; "
            "pass --force to overwrite"
        )
    roadmap = root / ROADMAP_PATH
    if not (roadmap.exists() or roadmap.is_symlink()):
        files[ROADMAP_PATH] = _template("roadmap.md")
    for rel, text in files.items():
        target = root / rel
        if target.is_symlink():
            target.unlink()  # never write through a link into another file
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, "utf-8")
        print(f"wrote {target}")
    return 0
