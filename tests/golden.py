"""Golden files: a text as a maintainer reads it, pinned in a file beside the tests.

`ODW_UPDATE_GOLDEN=1` rewrites the files after an intended change (review the
diff like code). Under `CI=true` the switch fails the test instead: a CI run
that rewrote its expectations would pass whatever the code printed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests import needs


def updating() -> bool:
    return bool(os.environ.get("ODW_UPDATE_GOLDEN"))


def assert_matches_golden(path: Path, text: str) -> None:
    """`text` is the file's content (or, when updating outside CI, becomes it)."""
    if updating():
        if needs.in_ci():
            pytest.fail(
                "ODW_UPDATE_GOLDEN is set under CI=true: golden files are never rewritten in CI"
            )
        path.write_text(text)
    assert text == path.read_text()
