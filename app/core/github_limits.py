"""GitHub's size limits on the text ODW writes, and the one way ODW fits them.

Every comment, pull request body and check run output passes `fit` in the
GitHub adapter that sends it (`app/github`), so no writer can produce a body GitHub refuses (a
stranger's long command once made a 90,388-character reply). Longer text is
cut with a visible note saying how much was left out, never silently.
"""

from __future__ import annotations

# Comment and pull request bodies. GitHub's refusal says "body is too long
# (maximum is 65536 characters)", but what it counts differs by surface: a
# comment is refused past 262,144 UTF-8 bytes, a pull request body past 65,536
# code points (measured in https://github.com/dead-claudia/github-limits/pull/13;
# "stored in MySQL as a mediumblob with a maximum value length of 262,144":
# https://github.com/orgs/community/discussions/27190, quoted in
# https://github.com/NejcZdovc/comment-pr/issues/11). 65,536 bytes is within
# both rules, whatever the text.
BODY_LIMIT = 65_536
# Check run output.summary and output.text: documented as 65,535 characters but
# counted in UTF-8 bytes ("summary exceeds a maximum bytesize of 65535";
# https://github.com/github/docs/issues/35252).
CHECK_OUTPUT_LIMIT = 65_535
# $GITHUB_STEP_SUMMARY: 1 MiB per step, beyond which the upload is refused
# (https://docs.github.com/en/actions/writing-workflows/choosing-what-your-workflow-does/
# workflow-commands-for-github-actions#step-isolation-and-limits).
STEP_SUMMARY_LIMIT = 1_048_576


def _note(cut: int, total: int, limit: int) -> str:
    return (
        f"\n\n… (cut by ODW: {cut:,} of {total:,} characters left out; "
        f"GitHub takes at most {limit:,} bytes here)"
    )


def fit(text: str, limit: int) -> str:
    """`text` in at most `limit` UTF-8 bytes, cut at a character boundary with a
    note saying how much was left out.

    A lone surrogate (JSON can carry one) cannot be sent as UTF-8; it becomes
    `?` rather than an error.
    """
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return data.decode("utf-8")
    whole = data.decode("utf-8")
    total = len(whole)
    # The note is sized for the largest count it can show, so the text kept
    # plus the note it ends up with is never over the limit.
    room = limit - len(_note(total, total, limit).encode())
    kept = data[: max(room, 0)].decode("utf-8", "ignore")
    return kept + _note(total - len(kept), total, limit)
