"""The fake GitHub fixtures of the GitHub boundary tests, shared here."""

from tests.github.conftest import (  # noqa: F401
    app,
    client,
    clock,
    fake,
    installation,
    repo,
    sleeper,
)
