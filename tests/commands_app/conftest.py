"""The App's end-to-end fixtures (`tests/apphost/conftest.py`), all of them, shared here."""

from tests.apphost.conftest import *  # noqa: F403
