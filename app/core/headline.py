"""A task's headline: its title without `Requires ...` and `See ...` sentences.

The squash commit's subject. Its own module because both the model
(`Task.headline`) and the scanner's `task_headline` (all `odw integrate`
reads of a roadmap) need it, and neither should import the other.
"""

from __future__ import annotations

import re

SENTENCE_END = re.compile(r"(?<=\.)\s+")


def headline(title: str) -> str:
    """The title without its `Requires ...` and `See ...` sentences (commit subjects)."""
    kept = [
        part
        for part in SENTENCE_END.split(title)
        if part and not part.startswith(("Requires ", "See "))
    ]
    return " ".join(kept) or title
