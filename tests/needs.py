"""What the suite needs from the machine, and what happens when it is missing.

PostgreSQL (`ODW_TEST_DATABASE_URL`), GitHub's npm oracles (`.cache/oracles`),
Chromium driven by Playwright (the dashboard's browser tests),
the shared roadmap corpus (`../shared/corpus`) and writable cgroups (the
runner's containment) are optional on a laptop: a test that needs one skips and
says how to provide it. In CI (`CI=true`) a green run must mean they ran, so the
same test fails instead. Every resource-dependent skip goes through here.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

POSTGRES = (
    "no PostgreSQL to test against",
    "set ODW_TEST_DATABASE_URL=postgresql+psycopg://USER@HOST:5432/DB to run these tests",
)
ORACLES = (
    "GitHub's webhook examples are not installed (.cache/oracles)",
    "run `make oracles` (needs npm) or `make test`, which installs them",
)
CORPUS = (
    "the shared roadmap corpus is not beside the repository (../shared/corpus/roadmaps)",
    "link or copy it to ../shared/corpus next to this checkout",
)
CGROUP_V2 = (
    "no writable cgroup v2 here (the runner's cgroup containment)",
    "run the tests as a user who may create cgroups under the cgroup v2 mount",
)
CGROUP_V1_FREEZER = (
    "no writable cgroup v1 freezer here (/sys/fs/cgroup/freezer)",
    "run the tests as root on a host with the cgroup v1 freezer mounted",
)


CHROMIUM = (
    "no Chromium with Playwright here (the dashboard's browser tests)",
    "run `make browser` (Debian's chromium) and `make venv` (playwright), or set "
    "ODW_TEST_CHROMIUM to a Chromium binary",
)


def open_files(needed: int, hard: int) -> tuple[str, str]:
    """The edge's half-open connection test holds more sockets than allowed."""
    return (
        f"this process may open only {hard} files (hard RLIMIT_NOFILE) and the test needs {needed}",
        f"raise the hard limit (`ulimit -Hn {needed}` as root, or LimitNOFILE= for the service)",
    )


SYSTEMD_ANALYZE = (
    "systemd-analyze is not installed (it checks docs/deploy.md's systemd unit)",
    "install Debian's systemd package (apt-get install systemd)",
)
MAKE_VENV = (
    "not running from a virtualenv made by `make` (no .installed-stamp)",
    "run the suite with `make test`",
)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def message(need: tuple[str, str]) -> str:
    what, how = need
    return f"{what}: {how}"


def unavailable(need: tuple[str, str]) -> NoReturn:
    """Skip the test (outside CI) or fail it (in CI), saying how to enable it."""
    if in_ci():
        pytest.fail(f"CI=true, and {message(need)}", pytrace=False)
    pytest.skip(message(need))


def unavailable_param(need: tuple[str, str], id: str) -> object:
    """A single pytest parameter standing for cases that cannot be generated."""
    return pytest.param(None, marks=pytest.mark.unavailable(*need), id=id)
