"""The reply to a comment's commands: each command quoted, then what happened.

The first line is a hidden marker naming the comment answered, so a
redelivered or replayed comment finds its answer and does nothing again. The
command line is someone's text: it is quoted as inline code through the shared
sanitiser (`app.core.sanitize.inline_code`), so it renders as typed, with no
mention, image, link or hidden marker. The reply's length is capped where it
is sent (`app.core.github_limits`).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.commands.host import Answer
from app.core.sanitize import inline_code

MARKER = "<!-- odw:reply {comment} -->"
QUOTE_LIMIT = 300  # characters of a command line shown in the reply


def sentence(text: str) -> str:
    """`text` ending in exactly one stop: never `?.` or `..`."""
    text = text.rstrip()
    return text if text.endswith((".", "!", "?")) else text + "."


def reply_marker(comment_id: int) -> str:
    return MARKER.format(comment=comment_id)


@dataclass(frozen=True)
class Line:
    """One command line and its outcome."""

    command: str
    ok: bool
    text: str
    refusal: bool = False
    answer: Answer | None = None


def reply_body(marker: str, login: str, lines: list[Line]) -> str:
    parts = [marker]
    refusals_said: set[str] = set()
    for line in lines:
        parts.append(f"> {inline_code(line.command, QUOTE_LIMIT)}")
        parts.append("")
        if line.refusal and line.text in refusals_said:
            parts.append("Refused, as above.")
        else:
            parts.append(("" if line.ok else "**Not done.** ") + line.text)
            if line.refusal:
                refusals_said.add(line.text)
        links = _links(line.answer)
        if links:
            parts.append("")
            parts.append(links)
        parts.append("")
    parts.append(f"<sub>Asked by @{login} · `/odw help` lists every command.</sub>")
    return "\n".join(parts)


def _links(answer: Answer | None) -> str:
    if answer is None:
        return ""
    found = []
    if answer.run_check_url:
        found.append(f"[run check]({answer.run_check_url})")
    if answer.task_pull_url:
        found.append(f"[task pull request]({answer.task_pull_url})")
    return " · ".join(found)
