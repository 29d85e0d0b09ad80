"""Which lines of a comment are commands."""

from __future__ import annotations

import pytest

from app.commands.lines import command_lines


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/odw retry 1.2", ["/odw retry 1.2"]),
        ("please\n/odw retry 1.2\nthanks\n  /odw status", ["/odw retry 1.2", "/odw status"]),
        ("> /odw retry 1.2", []),
        ("> quoted\n>/odw retry 1.2\n/odw status", ["/odw status"]),
        ("```\n/odw retry 1.2\n```\n/odw help", ["/odw help"]),
        ("~~~~text\n/odw retry 1.2\n~~~\n/odw retry 3\n~~~~\n/odw help", ["/odw help"]),
        ("text\n\n    /odw retry 1.2\n", []),
        ("\t/odw retry 1.2", []),
        ("<!--\n/odw retry 1.2\n-->\n/odw resume", ["/odw resume"]),
        ("run /odw retry 1.2 please", []),
        ("/odwretry 1.2\n/odw", ["/odw"]),
        ("/odw halt\r\n/odw resume\r\n", ["/odw halt", "/odw resume"]),
    ],
    ids=[
        "one-command",
        "several-in-order",
        "quote",
        "quote-without-space",
        "fenced-code",
        "tilde-fence-needs-same-length",
        "indented-code",
        "tab-indented-code",
        "html-comment",
        "mid-line",
        "prefix-must-be-a-word",
        "crlf",
    ],
)
def test_command_lines(body: str, expected: list[str]) -> None:
    assert command_lines(body) == expected
