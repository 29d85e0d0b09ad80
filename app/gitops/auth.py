"""Git authentication through GIT_ASKPASS, so a token never sits in a URL or a file.

The askpass script under the data directory holds no secret: it echoes the token
from its own environment, which only the git child processes receive. URLs that
carry credentials are refused outright rather than silently written to a config.
"""

from __future__ import annotations

import os
from pathlib import Path

TOKEN_ENV = "ODW_GIT_ASKPASS_TOKEN"  # noqa: S105 - a variable name
USERNAME_ENV = "ODW_GIT_ASKPASS_USERNAME"
DEFAULT_USERNAME = "x-access-token"  # what GitHub expects with an installation token

_SCRIPT = f"""#!/bin/sh
# Written by ODW. Holds no secret: answers git's prompts from the environment.
case "$1" in
  [Uu]sername*) printf '%s\\n' "${{{USERNAME_ENV}:-{DEFAULT_USERNAME}}}" ;;
  *) printf '%s\\n' "${{{TOKEN_ENV}}}" ;;
esac
"""


class CredentialsInUrl(ValueError):
    """The repository URL embeds a user or password; pass the token separately."""


def check_url(url: str) -> None:
    """Refuse `https://user:token@host/...`: git would store it in `.git/config`."""
    if "://" not in url:
        return
    from urllib.parse import urlsplit  # a URL at all: local paths need no parser

    parts = urlsplit(url)
    if parts.scheme in ("http", "https", "ftp", "ftps") and (parts.username or parts.password):
        raise CredentialsInUrl(
            "the repository URL carries credentials; drop them from the URL and set "
            "ODW_GIT_TOKEN instead (git then authenticates through GIT_ASKPASS)"
        )


def askpass_script(data_dir: Path) -> Path:
    """Install (atomically, idempotently) the askpass script and return its path."""
    target = data_dir / "bin" / "odw-askpass"
    if target.is_file() and target.read_text() == _SCRIPT and os.access(target, os.X_OK):
        return target
    import tempfile  # only the first landing in a data directory writes the script

    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".askpass-")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(_SCRIPT)
        os.chmod(tmp, 0o700)  # noqa: PTH101 - needs the path written via the fd
        Path(tmp).replace(target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def auth_env(data_dir: Path, token: str | None, username: str | None = None) -> dict[str, str]:
    """Environment for git children: askpass always (never a terminal prompt), token if any."""
    env = {"GIT_ASKPASS": str(askpass_script(data_dir))}
    if token:
        env[TOKEN_ENV] = token
    if username:
        env[USERNAME_ENV] = username
    return env
