"""The README's quick start and the links a newcomer follows from it."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO_ROOT

PAGES = ["README.md", "docs/deploy.md"]


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return {github_slug(h) for h in re.findall(r"^#{1,6} (.+)$", prose, flags=re.MULTILINE)}


def links(text: str) -> list[str]:
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return re.findall(r"\]\(([^)\s]+)\)", prose)


@pytest.mark.parametrize("page", PAGES, ids=["readme", "deploy"])
def test_every_local_link_leads_somewhere(page: str) -> None:
    source = REPO_ROOT / page
    broken = []
    for target in links(source.read_text()):
        if re.match(r"^[a-z]+:", target):
            continue  # another site
        path, _, anchor = target.partition("#")
        file = (source.parent / path).resolve() if path else source
        missing = not file.exists()
        if missing or (anchor and file.suffix == ".md" and anchor not in anchors(file.read_text())):
            broken.append(target)
    assert not broken, f"{page}: links that lead nowhere: {broken}"


def test_the_readme_opens_with_a_quick_start_of_at_most_ten_linked_steps() -> None:
    text = (REPO_ROOT / "README.md").read_text()
    first = re.search(r"^## (.+)$", text, flags=re.MULTILINE)
    assert first and first.group(1).startswith("Quick start")
    section = text[first.end() : text.index("\n## ", first.end())]
    steps = re.split(r"^\d+\. ", section, flags=re.MULTILINE)[1:]
    assert 1 <= len(steps) <= 10
    for number, step in enumerate(steps, 1):
        assert "`" in step, f"step {number} gives no command"
        assert re.search(r"\]\([^)]+\)", step), f"step {number} links to no detail"
