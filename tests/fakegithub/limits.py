"""GitHub's size limits on the text an App writes, refused as GitHub refuses them.

GitHub answers 422 Validation Failed, and stores nothing, for a comment or pull
request body over 65,536 characters ("body is too long (maximum is 65536
characters)": https://github.com/dtschust/redux-bug-reporter/issues/27) and for
a check run's `output.summary` or `output.text` over 65,535 UTF-8 bytes, though
the docs say characters ("summary exceeds a maximum bytesize of 65535":
https://github.com/github/docs/issues/35252). The fake is as strict.
"""

from __future__ import annotations

from typing import Any

from tests.fakegithub.server import Reply

BODY_LIMIT = 65_536
CHECK_OUTPUT_LIMIT = 65_535


def _invalid(resource: str, field: str, message: str) -> Reply:
    return Reply(
        422,
        {
            "message": "Validation Failed",
            "errors": [
                {"resource": resource, "code": "custom", "field": field, "message": message}
            ],
            "documentation_url": "https://docs.github.com/rest",
        },
    )


def refuse_long_body(resource: str, body: Any) -> None:
    """A comment's or pull request's body over GitHub's limit: 422."""
    if isinstance(body, str) and len(body) > BODY_LIMIT:
        raise _invalid(resource, "body", f"body is too long (maximum is {BODY_LIMIT} characters)")


def refuse_long_output(output: Any) -> None:
    """A check run's summary or text over GitHub's limit (in bytes): 422."""
    for field in ("summary", "text"):
        value = output.get(field) if isinstance(output, dict) else None
        if isinstance(value, str) and len(value.encode()) > CHECK_OUTPUT_LIMIT:
            raise _invalid(
                "CheckRun", field, f"{field} exceeds a maximum bytesize of {CHECK_OUTPUT_LIMIT}"
            )
