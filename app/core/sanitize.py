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


# -- GitHub-bound Markdown (check runs, comments, PR bodies) ---------------------
#
# ODW finds its own comments again by hidden markers (`<!-- odw:... -->`, HTML
# comments GitHub does not render; app/apphost/views.py writes them). Untrusted
# text quoted in ODW's output must not be able to forge one, hide text from the
# people reading it, notify anyone, or break out of the block that quotes it.

# A raw HTML tag, comment, declaration or processing instruction starts here.
_HTML_OPENER = re.compile(r"<(?=[A-Za-z/!?])")
# A link reference definition (`[label]: url`) renders as nothing at all.
_LINK_DEFINITION = re.compile(r"^( {0,3})\[(?=[^\]\n]*\]:)", re.M)
_LINE_SEPARATORS = re.compile("[\u2028\u2029\x85]")
_FENCE_RUN = re.compile(r"`{3,}|~{3,}")


def sanitize_markdown(text: str) -> str:
    """Untrusted text made safe to place in GitHub Markdown as prose.

    `sanitize` first (control, bidi and zero-width characters, complete HTML
    comments stripped, a lone `<!--` neutralised, mentions neutralised); then
    every raw HTML opener is escaped (`&lt;`), so no tag, comment or marker can
    be formed, hidden or closed, and link reference definitions, which render
    as nothing, are shown as text. Idempotent.
    """
    text = sanitize(_LINE_SEPARATORS.sub("\n", text))
    text = _HTML_OPENER.sub("&lt;", text)
    return _LINK_DEFINITION.sub(r"\1\\[", text)


def markdown_code_block(text: str, info: str = "text") -> str:
    """Untrusted text (a log tail, a diff) shown verbatim in a fenced block.

    The text is `sanitize`d (so its raw form carries no comment or marker) and
    fenced with more backticks than any run inside it, so it cannot close the
    fence and continue as Markdown.
    """
    body = sanitize(_LINE_SEPARATORS.sub("\n", text))
    longest = max((len(m.group()) for m in _FENCE_RUN.finditer(body)), default=2)
    fence = "`" * max(3, longest + 1)
    info = re.sub(r"[^0-9A-Za-z_+-]", "", info)
    if not body.endswith("\n"):
        body += "\n"
    return f"{fence}{info}\n{body}{fence}\n"
