"""Untrusted text renders as text end to end: a roadmap (and gate commands)
written to load images, link, ping and close issues, run by the real service on the fake
GitHub, leave no image, foreign link, mention, issue reference, closing
keyword or hidden HTML in anything ODW wrote there (judged by GitHub's
renderer, `tests/rendering.py`)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.apphost.harness import Service, wait_until
from tests.fakegithub import FakeGitHub
from tests.fakegithub import state as s
from tests.fakegithub.actions_runner import LocalActions
from tests.rendering import CLOSING, ISSUE_REFERENCE, MENTION, renders_as_text

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("apphost")]

HOSTILE = (
    "![p](https://t.example/p.gif) <img src=https://t.example/q.gif> "
    "[click](https://evil.example) &#64;org/team @admin Fixes #1 www.evil.example"
)
ROADMAP = (
    "# Roadmap\n\n## 1. Demo\n\n"
    f"- [ ] 1.1. Add a greeting {HOSTILE}\n"
    f"  - Success: `work/1-1.txt` exists. {HOSTILE} <details>hidden</details>\n"
)
ODW = {
    "gates": [f"true '{HOSTILE}' && test -d work"],
    "config": {"maxParallel": 1, "assessPartialBranches": False},
}
FOREIGN = ("t.example", "evil.example")


@pytest.fixture
def sample_spec() -> dict[str, Any]:
    return {"roadmap": ROADMAP, "odw": ODW}


def _written(fake: FakeGitHub) -> dict[str, str]:
    """Every Markdown text ODW wrote on the fake GitHub."""
    texts = {f"comment {c.id}": c.body for c in fake.comments.values() if c.user == fake.bot_login}
    for r in fake.check_runs.values():
        for part in ("summary", "text"):
            texts[f"check run {r.name} {part}"] = str((r.output or {}).get(part) or "")
    for p in fake.pulls.values():
        texts[f"pull {p.number} body"] = p.body
    return texts


def test_a_hostile_roadmap_and_gate_render_as_text_everywhere_odw_writes(
    fake: FakeGitHub, service: Service, sample: s.Repository, actions: LocalActions
) -> None:
    service.run_app()
    wait_until(
        "1.1 to land with its pull request and status comment",
        lambda: (
            "ODW-Task: 1.1" in sample.git.git("log", "--format=%B", "refs/heads/main")
            and any(c.body.startswith("<!-- odw:status") for c in fake.comments.values())
        ),
        timeout=240,
    )
    texts = _written(fake)
    assert any("Add a greeting" in t for t in texts.values())
    for where, text in texts.items():
        body = text.split("\n", 1)[1] if text.startswith("<!-- odw:") else text
        problems = renders_as_text(body, allowed_tags=("details", "summary", "sub"))
        # ODW's own links (its check runs, pull requests, ExecPlan) are fine.
        foreign = [p for p in problems if not p.startswith("link ") or any(h in p for h in FOREIGN)]
        assert foreign == [], (where, foreign)
    for p in fake.pulls.values():
        assert not MENTION.search(p.title) and not ISSUE_REFERENCE.search(p.title), p.title
        assert not CLOSING.search(p.title), p.title
