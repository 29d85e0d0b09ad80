"""Shared fixtures: the installed `odw` console script, the shared corpus and a
store on each database."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

from app.store import Store
from tests import needs
from tests.store.databases import database_url

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
CORPUS = SHARED / "corpus" / "roadmaps"

# Under CI a run is a verdict on one commit, not a search: every property test
# draws the same examples each time, with no example database and no per-example
# deadline (a shared machine's pauses are not failures). Outside CI, Hypothesis
# keeps exploring and remembers what it found.
hypothesis_settings.register_profile("ci", derandomize=True, database=None, deadline=None)
if needs.in_ci():
    hypothesis_settings.load_profile("ci")


def odw_executable() -> str:
    """The console script installed next to the interpreter running the tests."""
    candidate = Path(sys.executable).with_name("odw")
    return str(candidate) if candidate.exists() else "odw"


RunOdw = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_odw() -> RunOdw:
    """Run `odw` as a user would: a real subprocess, text output captured."""

    def run(*args: str, cwd: Path | None = None, timeout: float = 120, **kw: object):
        return subprocess.run(
            [odw_executable(), *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            **kw,  # type: ignore[arg-type]
        )

    return run


@pytest.fixture(autouse=True, scope="session")
def _roadmap_cache_in_a_session_directory(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[None]:
    """`odw roadmap` / `odw next` keep parses under `ODW_CACHE_DIR`: here, never the home."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ODW_CACHE_DIR", str(tmp_path_factory.mktemp("odw-cache")))
        yield


@pytest.fixture(params=["sqlite", "postgres"], ids=["sqlite", "postgres"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh store on each database (PostgreSQL when ODW_TEST_DATABASE_URL is set)."""
    with database_url(request.param, tmp_path) as url:
        s = Store.open(url)
        yield s
        s.close()


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        needs.unavailable(needs.CORPUS)
    return CORPUS


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Cases marked `unavailable(what, how)` skip, or fail in CI (see tests/needs.py)."""
    mark = item.get_closest_marker("unavailable")
    if mark is not None:
        needs.unavailable((mark.args[0], mark.args[1]))
