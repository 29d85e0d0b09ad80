"""Untrusted repository text made safe to quote: one definition for runner and App.

Roadmaps, ExecPlans, review text and comments are data. Before they reach a
prompt, a job summary or a comment they lose control characters, bidi and
zero-width (format) characters and HTML comments, their @mentions stop
notifying anyone, and prompts carry them only inside delimited blocks whose
fence the text itself cannot forge.
"""

from __future__ import annotations

import re
import unicodedata

# A GitHub login or org/team after an @ that does not follow a word character
# (so e-mail addresses stay intact).
_MENTION = re.compile(r"(?<![0-9A-Za-z_.@/])@(?=[0-9A-Za-z](?:[0-9A-Za-z]|-(?=[0-9A-Za-z])){0,38})")
# Complete comments only: a lone opener is neutralised, never allowed to eat
# the rest of the text (a title's `<!--` would swallow the task's context).
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_COMMENT_OPENER = "<!--"
NEUTRAL_OPENER = "\uff1c!--"
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_NEWLINES = re.compile(r"\r\n?")

FENCE_PREFIX = "ODW-UNTRUSTED"
# Shown instead of @ so a quoted mention is readable but notifies nobody.
NEUTRAL_AT = "\uff20"


def _keep(ch: str) -> bool:
    if ch in "\n\t":
        return True
    # Cc: control characters; Cf: format characters (bidi embeddings and
    # isolates, zero-width space/joiners, BOM, invisible Unicode tag letters).
    return unicodedata.category(ch) not in ("Cc", "Cf")


def strip_ansi(text: str) -> str:
    """Terminal escape sequences removed (CSI, OSC and two-character escapes)."""
    return _ANSI.sub("", text)


def sanitize(text: str) -> str:
    """Text with invisible and steering content removed; idempotent."""
    text = _NEWLINES.sub("\n", strip_ansi(text))
    text = "".join(ch for ch in text if _keep(ch))
    # Removing one comment can join two halves into a new one: repeat.
    while True:
        stripped = _HTML_COMMENT.sub("", text)
        if stripped == text:
            break
        text = stripped
    return _MENTION.sub(NEUTRAL_AT, _neutralise_openers(text))


def _neutralise_openers(text: str) -> str:
    """A `<!--` with no closer shown as `＜!--`: visible, and it hides nothing."""
    return text.replace(_COMMENT_OPENER, NEUTRAL_OPENER)


def truncate(text: str, limit: int) -> str:
    """At most `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    return text[:limit] + f"\n[... {cut} characters cut by ODW ...]\n"


def delimited_block(label: str, text: str, *, nonce: str, limit: int = 65536) -> str:
    """Sanitised `text` between fences naming `label`; the text cannot close them.

    `nonce` comes from the caller (the attempt's token), so a repository cannot
    predict the fence; any fence-like line inside the text is defused anyway.
    """
    label = re.sub(r"[^0-9A-Za-z_.-]+", "-", label).strip("-") or "text"
    body = truncate(sanitize(text), limit)
    body = body.replace(FENCE_PREFIX, FENCE_PREFIX.lower().replace("-", "_"))
    head = f"<<<{FENCE_PREFIX} {label} {nonce}"
    tail = f">>>{FENCE_PREFIX} {label} {nonce}"
    if not body.endswith("\n"):
        body += "\n"
    return f"{head}\n{body}{tail}\n"
