"""The fake GitHub fixtures of the GitHub boundary tests, shared here."""

from tests.github.conftest import (  # noqa: F401
    app,
    clock,
    fake,
    sleeper,
)
