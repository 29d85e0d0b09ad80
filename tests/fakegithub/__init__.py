"""A stateful fake GitHub for tests and `make demo`: REST checked against
GitHub's OpenAPI description, real git over smart HTTP, signed webhooks."""

from tests.fakegithub import faults
from tests.fakegithub.server import FakeGitHub

__all__ = ["FakeGitHub", "faults"]
