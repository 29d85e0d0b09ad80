"""Gate output on a task's check run, through the real view sync and client, to
a fake GitHub that counts bytes as github.com does (`tests/fakegithub/limits.py`):
70,000 characters of non-ASCII gate output are accepted, and the check run says
how much was left out."""

from __future__ import annotations

import re
from pathlib import Path

from app.apphost.judged import Judged
from app.core.github_limits import CHECK_OUTPUT_LIMIT
from app.core.verdict import Check, GateResult, Verdict
from app.github.client import RepositoryClient
from app.store import Store
from tests.apphost.test_check_run_attempts import (
    ROADMAP,
    branch_head,
    client,
    named,
    store,
    syncer,
)
from tests.core.runkit import Run
from tests.fakegithub import FakeGitHub

__all__ = ["client", "store"]  # the fixtures, shared with the attempts' tests

GATES = ("make lint", "make test", "make docs", "make bench", "make e2e")
# 14,000 characters per gate, 70,000 in all, of 3.4 bytes on average.
OUTPUT = "失敗 😀😁😂🤣😃😄😅😆😉😊\n" * 1_000


def test_70000_characters_of_non_ascii_gate_output_are_accepted_and_say_how_much_was_cut(
    fake: FakeGitHub, client: RepositoryClient, store: Store, tmp_path: Path
) -> None:
    run = Run(ROADMAP, stage_attempts=1)
    run.finish("1.1", "exit:1")
    assert sum(len(OUTPUT) for _ in GATES) == 70_000
    head = branch_head(fake).latest["1.1"].head_after
    verdict = Verdict(
        head_after=head,
        stage="plan",
        task="1.1",
        token="t" * 16,
        passed=False,
        checks=[Check(name="gates", status="failed", reason="gates failed")],
        gates=[GateResult(command=g, code=1, status="failed", tail=OUTPUT) for g in GATES],
    )
    syncer(store, client, fake, Judged(latest={"1.1": verdict})).sync(run.state)
    [check] = named(fake, "ODW · 1.1")
    text = check.output["text"]
    assert len(text.encode()) <= CHECK_OUTPUT_LIMIT
    # Each gate's tail is cut to its last 4,000 characters first, and says so...
    assert text.count("(last 4000 characters; 10000 cut)") >= 4
    # ...and the five tails together are still over GitHub's 65,535 bytes: cut, and said.
    said = re.search(r"… \(cut by ODW: ([\d,]+) of ([\d,]+) characters left out; ", text)
    assert said is not None, text[-300:]
    left_out, total = (int(g.replace(",", "")) for g in said.groups())
    assert left_out > 0 and total == left_out + len(text[: said.start()].rstrip("\n"))
