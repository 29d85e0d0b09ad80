"""GitHub's size limits on the text ODW writes, and the one way ODW fits them.

Every comment, pull request body and check run output passes `fit` in the
GitHub adapter that sends it (`app/github`), so no writer can produce a body GitHub refuses (a
stranger's long command once made a 90,388-character reply). Longer text is
cut with a visible note, never silently.
"""

from __future__ import annotations

# Comment and pull request bodies: "body is too long (maximum is 65536
# characters)" (422; https://github.com/dtschust/redux-bug-reporter/issues/27).
BODY_LIMIT = 65_536
# Check run output.summary and output.text: documented as 65,535 characters but
# counted in UTF-8 bytes ("summary exceeds a maximum bytesize of 65535";
# https://github.com/github/docs/issues/35252).
CHECK_OUTPUT_LIMIT = 65_535
# $GITHUB_STEP_SUMMARY: 1 MiB per step, beyond which the upload is refused
# (https://docs.github.com/en/actions/writing-workflows/choosing-what-your-workflow-does/
# workflow-commands-for-github-actions#step-isolation-and-limits).
STEP_SUMMARY_LIMIT = 1_048_576


def fit(text: str, limit: int) -> str:
    """`text` in at most `limit` UTF-8 bytes (so characters too), with a note when cut."""
    data = text.encode()
    if len(data) <= limit:
        return text
    note = f"\n\n… (cut by ODW: GitHub takes at most {limit:,} bytes here)"
    kept = data[: limit - len(note.encode())].decode(errors="ignore")
    return kept + note
