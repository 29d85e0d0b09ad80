"""The runner's step summary renders the agent's and the repository's text as
text: GitHub's renderer (`tests/rendering.py`) finds no image, link, mention,
issue reference or hidden HTML from it, and the output tail stays in its block."""

from __future__ import annotations

from actions.summary import render_summary
from app.core.verdict import (
    AssessmentReport,
    Check,
    Finding,
    GateResult,
    RejectedPath,
    ReviewReport,
    SalvageBundle,
    Verdict,
)
from tests.rendering import render, renders_as_text

HOSTILE = (
    "![pixel](https://t.example/p.gif) <img src=https://t.example/q.gif> "
    "[click](https://evil.example) &#64;org/team @admin Fixes #3 www.evil.example "
    "<details><summary>x</summary>hidden</details> <!-- odw:status -->"
)


def _verdict() -> Verdict:
    return Verdict(
        stage="review",
        task="1.1",
        token="t" * 16,
        passed=False,
        branch="roadmap-1-1",
        checks=[Check(name="gates", status="failed", reason=HOSTILE, code=2)],
        gates=[GateResult(command=f"make test {HOSTILE}", code=2, status="failed", tail=HOSTILE)],
        salvage=SalvageBundle(
            files=["a`b`.py"], rejected=[RejectedPath(path="x|y.md", reason=HOSTILE)]
        ),
        report=ReviewReport(
            decision="changes", findings=[Finding(summary=HOSTILE, path="a.py", line=3)]
        ),
        assessment=AssessmentReport(classification="adopt-partial", summary=HOSTILE),
        output_tail=f"done\n```\n# Injected heading\n{HOSTILE}\n",
    )


def test_the_step_summary_renders_untrusted_text_as_text() -> None:
    summary = render_summary(_verdict())
    # ODW's own: the collapsible output tail.
    assert renders_as_text(summary, allowed_tags=("details", "summary")) == []
    html = render(summary).html
    assert "<h1>Injected heading" not in html  # the tail stayed in its code block
    assert html.count("<details>") == 1


def test_the_step_summary_fits_githubs_limit() -> None:
    verdict = _verdict().model_copy(
        update={
            "checks": [Check(name=f"c{i}", status="failed", reason="é" * 300) for i in range(5000)]
        }
    )
    summary = render_summary(verdict)
    assert len(summary.encode()) <= 1_048_576
    assert "cut by ODW" in summary
