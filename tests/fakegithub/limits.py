"""GitHub's size limits on the text an App writes, refused as GitHub refuses them.

GitHub answers 422 Validation Failed, and stores nothing, past these limits.
Each refusal says "maximum is 65536 characters", but what is counted differs:

- a comment body: UTF-8 bytes, at most 262,144 (262,144 ASCII characters are
  stored, as are 65,536 four-byte emoji; one byte more is refused), measured in
  https://github.com/dead-claudia/github-limits/pull/13 and
  https://github.com/objectstack-ai/objectstack/pull/18841; the answer's
  shape (`IssueComment`, `unprocessable`, field `data`) as recorded in
  https://github.com/telia-oss/github-pr-resource/issues/259;
- a pull request body: characters (code points), at most 65,536, ASCII or not
  (the same measurement, github-limits#13); the answer (`Issue`, `custom`,
  field `body`) as recorded in https://github.com/renovatebot/renovate/issues/2032
  and https://github.com/denoland/bump-workspaces/issues/34;
- a check run's `output.summary` or `output.text`: UTF-8 bytes, at most 65,535,
  though the docs say characters ("summary exceeds a maximum bytesize of
  65535": https://github.com/github/docs/issues/35252,
  https://github.com/dorny/test-reporter/issues/57).
"""

from __future__ import annotations

from typing import Any

from tests.fakegithub.server import Reply

COMMENT_BYTES = 262_144
PULL_BODY_CHARACTERS = 65_536
CHECK_OUTPUT_BYTES = 65_535


def _invalid(resource: str, code: str, field: str, message: str) -> Reply:
    return Reply(
        422,
        {
            "message": "Validation Failed",
            "errors": [{"resource": resource, "code": code, "field": field, "message": message}],
            "documentation_url": "https://docs.github.com/rest",
        },
    )


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def refuse_long_comment(body: Any) -> None:
    """A comment's body over 262,144 bytes: 422 (the message says characters)."""
    if isinstance(body, str) and _bytes(body) > COMMENT_BYTES:
        message = "Body is too long (maximum is 65536 characters)"
        raise _invalid("IssueComment", "unprocessable", "data", message)


def refuse_long_pull_body(body: Any) -> None:
    """A pull request's body over 65,536 characters: 422."""
    if isinstance(body, str) and len(body) > PULL_BODY_CHARACTERS:
        raise _invalid("Issue", "custom", "body", "body is too long (maximum is 65536 characters)")


def refuse_long_output(output: Any) -> None:
    """A check run's summary or text over 65,535 bytes: 422."""
    for field in ("summary", "text"):
        value = output.get(field) if isinstance(output, dict) else None
        if isinstance(value, str) and _bytes(value) > CHECK_OUTPUT_BYTES:
            raise _invalid(
                "CheckRun", "custom", field, f"{field} exceeds a maximum bytesize of 65535"
            )
