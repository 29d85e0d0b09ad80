"""Which lines of a comment are commands: `/odw ...` at the start of a line,
outside quotes (`>`), fenced or indented code blocks and HTML comments.

People quote a command to discuss it and paste one in a code block to show
it; neither may run anything. Pure: no I/O.
"""

from __future__ import annotations

import re

from app.commands.grammar import PREFIX

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_QUOTE = re.compile(r"^ {0,3}>")
_COMMAND = re.compile(r"^ {0,3}" + re.escape(PREFIX) + r"(?:\s|$)")


def command_lines(body: str) -> list[str]:
    """The command lines of a Markdown comment, in order, stripped."""
    found: list[str] = []
    fence: str | None = None
    in_html_comment = False
    for raw in body.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = raw.expandtabs(4)
        if fence is not None:
            closing = _FENCE.match(line)
            if (
                closing
                and closing.group(1)[0] == fence[0]
                and len(closing.group(1)) >= len(fence)
                and not line.strip().strip(fence[0])
            ):
                fence = None
            continue
        if in_html_comment:
            in_html_comment = "-->" not in line
            continue
        opening = _FENCE.match(line)
        if opening:
            fence = opening.group(1)
            continue
        if line.lstrip().startswith("<!--") and "-->" not in line:
            in_html_comment = True
            continue
        # Four spaces of indentation make a code block (or its continuation),
        # never a command: `_COMMAND` allows at most three.
        if _QUOTE.match(line):
            continue
        if _COMMAND.match(line):
            found.append(line.strip())
    return found
