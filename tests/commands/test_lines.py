"""Which lines of a comment are commands: only those a reader sees as plain
paragraph lines (CommonMark, as GitHub renders it)."""

from __future__ import annotations

import pytest

from app.commands.lines import command_lines


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/odw retry 1.2", ["/odw retry 1.2"]),
        ("please\n/odw retry 1.2\nthanks\n  /odw status", ["/odw retry 1.2", "/odw status"]),
        ("> /odw retry 1.2", []),
        ("> quoted\n>/odw retry 1.2\n\n/odw status", ["/odw status"]),
        ("```\n/odw retry 1.2\n```\n/odw help", ["/odw help"]),
        ("~~~~text\n/odw retry 1.2\n~~~\n/odw retry 3\n~~~~\n/odw help", ["/odw help"]),
        ("text\n\n    /odw retry 1.2\n", []),
        ("\t/odw retry 1.2", []),
        ("<!--\n/odw retry 1.2\n-->\n/odw resume", ["/odw resume"]),
        ("run /odw retry 1.2 please", []),
        ("/odwretry 1.2\n/odw", ["/odw"]),
        ("/odw halt\r\n/odw resume\r\n", ["/odw halt", "/odw resume"]),
        ("text <!-- hidden\n/odw retry 1.2\n--> shown\n/odw status", ["/odw status"]),
        ("> quoted\n/odw retry 1.2", []),
        ("<pre>\n/odw retry 1.2\n</pre>\n\n/odw help", ["/odw help"]),
        ("<details>\n\n/odw retry 1.2\n\n</details>\n\n/odw help", ["/odw help"]),
        ("<div>\n/odw retry 1.2\n</div>", []),
        ("<div>\n\n/odw retry 1.2\n\n</div>", []),
        ("text <sub>small\n/odw retry 1.2</sub>\n\n/odw help", ["/odw help"]),
        ("- item\n/odw retry 1.2", []),
        ("1. item\n\n   /odw retry 1.2", []),
        ("| a |\n|---|\n/odw retry 1.2", []),
        ("a `code\n/odw retry 1.2` b", []),
        ("[a link\n/odw retry 1.2](https://example.com)", []),
        ("<b>bold</b> text\n/odw help", ["/odw help"]),
        ("no command at all, just /odw mentioned", []),
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
        "html-comment-opened-mid-line",
        "lazy-quote-continuation",
        "pre-block",
        "details-block",
        "div-block",
        "div-with-blank-lines",
        "inline-element-left-open",
        "lazy-list-continuation",
        "list-item-paragraph",
        "table-row",
        "code-span-across-lines",
        "link-text",
        "closed-inline-element",
        "mentioned-mid-line",
    ],
)
def test_command_lines(body: str, expected: list[str]) -> None:
    assert command_lines(body) == expected
