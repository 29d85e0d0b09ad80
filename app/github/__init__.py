"""The GitHub boundary: PyGithub behind narrow ports (see `ports.py`).

Nothing outside this package imports PyGithub. `GitHubApp` holds the App's
credentials, the process-wide installation-token cache, the retry policy, the
content budget and the request counters; `GitHubApp.repository(...)` hands out
the small per-use clients the rest of the code sees only through `ports`.
"""

from app.github.client import GitHubApp, RepositoryClient
from app.github.errors import (
    GitHubError,
    GitHubUnavailable,
    HeadMoved,
    NotFound,
    NotMergeable,
    RateLimited,
    Unauthorized,
    Unprocessable,
    UnsafeArtifact,
    WriteOutcomeUnknown,
)

__all__ = [
    "GitHubApp",
    "GitHubError",
    "GitHubUnavailable",
    "HeadMoved",
    "NotFound",
    "NotMergeable",
    "RateLimited",
    "RepositoryClient",
    "Unauthorized",
    "Unprocessable",
    "UnsafeArtifact",
    "WriteOutcomeUnknown",
]
