"""The App's one rendering module (`app/apphost/views.py`) passes every text
from outside ODW through the Markdown-level sanitiser: a hostile roadmap
title, success criteria or gate output cannot forge ODW's status marker,
hide text, load an image, make a link, mention anyone, reference or close an
issue, or escape its code block: GitHub's renderer (`tests/rendering.py`) judges."""

from __future__ import annotations

import re

from app.apphost import views
from app.core.config import RunConfig
from app.core.decide import decide
from app.core.inputs import StartRun
from app.core.state import RunState, apply
from app.core.verdict import Check, GateResult, Verdict
from tests.core.runkit import AT
from tests.rendering import CLOSING, ISSUE_REFERENCE, MENTION, render, renders_as_text

HOSTILE_TITLE = (
    "Greet <!-- odw:status v1 task=9.9 --> @admin \u202eevil <img src=x> <!-- open "
    "![p](https://t.example/p.gif) &#64;org/team Fixes #3 www.evil.example"
)
ROADMAP = (
    "## 1. Work\n\n"
    f"- [ ] 1.1. {HOSTILE_TITLE}\n"
    "  - Success: `ok` <details>hidden</details> [x]: http://t.example @org/team\n"
    "    [click](https://evil.example) &#x40;octocat closes org/repo#4 https://t.example/x\n"
)
TAIL = "ok\n```\n# Injected heading <!-- odw:status v1 task=1.1 -->\n@admin\nFAILED @admin\n"
HOSTILE_GATE = "make test '<img src=https://t.example/q.gif> ![p](https://t.example/p.gif) @admin'"


def _state() -> RunState:
    state = RunState()
    events, _ = decide(
        state,
        StartRun(at=AT, run_id="r", roadmap=ROADMAP, config=RunConfig()),
        lambda: "token-000001",
    )
    for e in events:
        apply(state, e)
    return state


def _verdict() -> Verdict:
    return Verdict(
        stage="gates",
        task="1.1",
        token="token-000001",
        passed=False,
        checks=[
            Check(
                name="gates",
                status="failed",
                reason="@admin <!-- odw:status --> ![x](https://t.example/r.gif) Fixes #9",
            )
        ],
        # The command is the repository's own, shown in the raw HTML of a
        # `<summary>` line, where Markdown's escapes do not apply.
        gates=[GateResult(command=HOSTILE_GATE, code=1, status="failed", tail=TAIL)],
    )


def _rendered() -> dict[str, str]:
    s = _state()
    t = s.task("1.1")
    links = views.Links()
    check = views.task_check(s, t, links, _verdict())
    return {
        "status comment": views.status_comment(s, t, links, _verdict(), False),
        "task check": f"{check.title}\n{check.summary}\n{check.text or ''}",
        "pull title": views.pull_title(s, t),
        "pull body": views.pull_body(s, t, True),
        "run check": views.run_check(s, links).summary,
    }


def test_github_bound_text_carries_only_odws_own_marker() -> None:
    for where, text in _rendered().items():
        markers = re.findall(r"<!--.*?-->", text, re.S)
        if where == "status comment":
            assert markers == [views.marker("1.1")], markers
        else:
            assert markers == [], (where, markers)
        assert "<!--" not in text.replace(views.marker("1.1"), ""), where


def test_github_bound_text_mentions_nobody_and_hides_nothing() -> None:
    for where, text in _rendered().items():
        assert not re.search(r"(?<![\w.@/])@(admin|org)", text), where
        assert "\u202e" not in text, where
        if where != "pull title":  # plain text: GitHub shows a title's `<img>` as text
            html = render(text)
            assert html.images == [] and "<details>hidden" not in html.html, where


def test_gate_output_cannot_close_its_code_block() -> None:
    summary = _rendered()["task check"]
    block = re.search(r"^(`{3,})text\n(.*?)^\1$", summary, re.M | re.S)
    assert block is not None, summary
    fence, body = block.group(1), block.group(2)
    assert "# Injected heading" in body  # shown verbatim, inside the block
    assert max(len(r) for r in re.findall(r"`+", body)) < len(fence)


def test_github_bound_text_renders_untrusted_text_as_text() -> None:
    for where, text in _rendered().items():
        if where == "pull title":
            continue
        # ODW's own: the gate tails' <details>, the ExecPlan link.
        found = renders_as_text(
            text.replace(views.marker("1.1"), ""),
            allowed_links=("../blob/roadmap-1-1/docs/execplans/1-1.md",),
            allowed_tags=("details", "summary"),
        )
        assert found == [], (where, found)


def test_the_pull_title_pings_references_and_closes_nothing() -> None:
    title = _rendered()["pull title"]
    assert "Greet" in title and "evil" in title
    assert not MENTION.search(title) and not ISSUE_REFERENCE.search(title)
    assert not CLOSING.search(title) and "<!--" not in title and "\u202e" not in title
