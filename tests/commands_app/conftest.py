"""The App's end-to-end fixtures (`tests/apphost/conftest.py`), shared here."""

from tests.apphost.conftest import (  # noqa: F401
    actions,
    agent_script,
    fake,
    sample,
    service,
    service_env_extra,
)
