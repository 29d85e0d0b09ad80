"""How ODW starts another ODW process: with its own code, never its working directory's.

`python -m` and `python -c` put the working directory first on `sys.path`, and
ODW starts children in directories it does not own: the runner in a task's
worktree (whatever the repository or its agent committed), the service's
companions wherever `odw serve` was started. An `app/` package or a
`concurrent.py` there would run as ODW, outside containment and with ODW's
environment. So every child is `python -I` (no working directory or script
directory on the path, no `PYTHON*` variables, no user site) given this
process's own import path explicitly: it imports what its parent imports.
The path travels in argv, not the environment: agents and gates the child
starts see the caller's own `PYTHONPATH`, with nothing of ODW's added.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# Runs in the child: the path from argv[1] (a JSON list), then `odw` with the rest.
_BOOTSTRAP = (
    "import json, sys; sys.path[:] = json.loads(sys.argv.pop(1)); "
    "from app.cli.main import main; sys.exit(main())"
)


def import_path() -> list[str]:
    """This process's import path, absolute entries only (`''` is the working directory)."""
    return [p for p in sys.path if Path(p).is_absolute()]


def odw_argv(*args: str) -> list[str]:
    """The argv of a new interpreter running `odw *args` with this process's code."""
    return [sys.executable, "-I", "-c", _BOOTSTRAP, json.dumps(import_path()), *args]
