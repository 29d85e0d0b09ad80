"""An in-memory event log with the store's append contract (expected version)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from app.engine.ports import ConcurrencyError


class MemoryEventLog:
    """Keeps events as JSON text, so nothing but plain data survives a reload."""

    def __init__(self, events: Sequence[dict[str, Any]] = ()) -> None:
        self._rows: list[str] = [json.dumps(e, sort_keys=True) for e in events]

    def load(self) -> list[dict[str, Any]]:
        return [json.loads(r) for r in self._rows]

    def append(self, events: Sequence[dict[str, Any]], expected_version: int) -> int:
        if expected_version != len(self._rows):
            raise ConcurrencyError(expected_version, len(self._rows))
        self._rows.extend(json.dumps(e, sort_keys=True) for e in events)
        return len(self._rows)

    def __len__(self) -> int:
        return len(self._rows)
