"""Plain-text tables and JSON printing shared by the commands."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def print_json(data: object) -> None:
    import json  # only --json output needs it; every command start pays for its import

    json.dump(data, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, width: int = 60) -> str:
    """Left-aligned columns; the last column is cut to `width` characters."""
    cut = [[*r[:-1], _cut(r[-1], width)] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cut]) for i, h in enumerate(headers)]
    # One format per table rather than a join per row: `odw next` prints thousands.
    line = "  ".join(f"{{:<{w}}}" for w in widths).format
    return "\n".join([line(*headers).rstrip(), *(line(*r).rstrip() for r in cut)])


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
