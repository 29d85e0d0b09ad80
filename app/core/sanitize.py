"""Untrusted repository text made safe to quote: one definition for runner and App.

Roadmaps, ExecPlans, review text and comments are data. Before they reach a
prompt, a job summary or a comment they lose control characters, bidi and
zero-width (format) characters and HTML comments, their @mentions stop
notifying anyone, and prompts carry them only inside delimited blocks whose
fence the text itself cannot forge.
"""

from __future__ import annotations

import html
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


# -- GitHub-bound Markdown (check runs, comments, PR bodies and titles) -----------
#
# ODW finds its own comments again by hidden markers (`<!-- odw:... -->`, HTML
# comments GitHub does not render; app/apphost/views.py writes them). Untrusted
# text quoted in ODW's output must not be able to forge one, hide text from the
# people reading it, load an image, make a link, notify anyone, reference (or
# close) an issue, or break out of the block that quotes it. Everything ODW
# writes to GitHub goes through the functions below; the tests render
# their output with cmark-gfm, GitHub's own renderer, to prove it.

# GitHub links `@login` and `@org/team` (and e-mail addresses) wherever an @
# stands in the rendered text, including one decoded from `&#64;` or `&commat;`:
# every @ of untrusted text is shown as the full-width ＠, which links nothing.
# `#12`, `org/repo#12` and `GH-12` reference an issue (and after `Fixes`, close
# it): the # becomes ＃ and the hyphen a non-breaking one.
_ISSUE_HASH = re.compile(r"#(?=[0-9])")
NEUTRAL_HASH = "\uff03"
_GH_REFERENCE = re.compile(r"\b(GH)-(?=[0-9])", re.I)
_NON_BREAKING_HYPHEN = "\u2011"
# Backslash-escaped where they are active (an even run of backslashes before
# them, so escaping twice changes nothing): `[` opens every link, image,
# footnote and link reference definition; `<` before a letter, `/`, `!` or `?`
# opens raw HTML, a comment or an autolink; `&` opens a character reference
# (`&#64;`, `&commat;`, `&#x68;ttps`), which would decode into what the rest
# of this list removes.
_ACTIVE = re.compile(r"(?<!\\)((?:\\\\)*)(\[|<(?=[A-Za-z/!?])|&(?=#|[A-Za-z][A-Za-z0-9]*;))")
# cmark-gfm's extended autolinks: `www.`, and the schemes it links bare.
# (Anywhere, not only after a word boundary: cmark-gfm links `1https://x` too.)
_AUTOLINK_SCHEME = re.compile(r"(https?|ftp|mailto|xmpp):", re.I)
_AUTOLINK_WWW = re.compile(r"(www)\.", re.I)
# A fence's info string picks a renderer (mermaid, geojson, math...): plain text only.
_FENCE_INFO = re.compile(r"^( {0,3}(?:`{3,}|~{3,}))[ \t]*[^\s`][^\n]*$", re.M)
_LINE_SEPARATORS = re.compile("[\u2028\u2029\x85]")
_FENCE_RUN = re.compile(r"`{3,}|~{3,}")
_BACKTICKS = re.compile(r"`+")


def _unreferenced(text: str) -> str:
    """No mention, e-mail link or issue reference can form from `text`."""
    text = text.replace("@", NEUTRAL_AT)
    text = _ISSUE_HASH.sub(NEUTRAL_HASH, text)
    return _GH_REFERENCE.sub(r"\1" + _NON_BREAKING_HYPHEN, text)


def sanitize_markdown(text: str) -> str:
    """Untrusted text made safe to place in GitHub Markdown as prose.

    `sanitize` first (control, bidi and zero-width characters, complete HTML
    comments stripped, a lone `<!--` neutralised); then no mention or issue
    reference, and every construct that loads, links or hides is shown as the
    text it is: raw HTML, links and images, character references, autolinks,
    and fence info strings that pick a renderer. Formatting (emphasis, code
    spans, lists) stays. Idempotent.
    """
    text = _unreferenced(sanitize(_LINE_SEPARATORS.sub("\n", text)))
    text = _ACTIVE.sub(r"\1\\\2", text)
    text = _AUTOLINK_SCHEME.sub(r"\1\\:", text)
    text = _AUTOLINK_WWW.sub(r"\1\\.", text)
    return _FENCE_INFO.sub(r"\1text", text)


def sanitize_line(text: str) -> str:
    """Untrusted text for a plain-text field GitHub links references in (a PR
    title): one line, no mention, no issue reference, nothing invisible."""
    return " ".join(_unreferenced(sanitize(text)).split())


def html_text(text: str, limit: int = 300) -> str:
    """Untrusted text inside raw HTML (a `<details>` summary line), where
    Markdown's backslash escapes do not apply: one line, no mention or issue
    reference, cut at `limit`, and HTML-escaped, so no tag, attribute or
    character reference can form from it."""
    body = truncate(" ".join(_unreferenced(sanitize(text)).split()), limit)
    return html.escape(body, quote=True)


def inline_code(text: str, limit: int = 300) -> str:
    """Untrusted text quoted as one inline code span the text cannot close.

    Nothing renders inside a code span (no HTML, link, image or mention); the
    text is still `sanitize`d and unreferenced, so the raw body carries no
    marker or mention either, and it is cut at `limit` characters.
    """
    body = " ".join(_unreferenced(sanitize(text)).split())
    if len(body) > limit:
        body = body[: limit - 1] + "…"
    longest = max((len(m.group()) for m in _BACKTICKS.finditer(body)), default=0)
    fence = "`" * (longest + 1)
    if not body:
        return "` `"
    # One space each side is stripped by the renderer, so a backtick at either
    # end cannot join the fence.
    pad = " " if body[0] == "`" or body[-1] == "`" else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def markdown_code_block(text: str, info: str = "text") -> str:
    """Untrusted text (a log tail, a diff) shown verbatim in a fenced block.

    The text is `sanitize`d (so its raw form carries no comment or marker) and
    fenced with more backticks than any run inside it, so it cannot close the
    fence and continue as Markdown. Nothing in a code block links or mentions.
    """
    body = sanitize(_LINE_SEPARATORS.sub("\n", text))
    longest = max((len(m.group()) for m in _FENCE_RUN.finditer(body)), default=2)
    fence = "`" * max(3, longest + 1)
    info = re.sub(r"[^0-9A-Za-z_+-]", "", info)
    if not body.endswith("\n"):
        body += "\n"
    return f"{fence}{info}\n{body}{fence}\n"
