"""What the secrets scans share: a sampler of every process's command line
and the search for planted credentials in everything ODW wrote."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from pathlib import Path


class CmdlineSampler:
    """Reads /proc/<pid>/cmdline of every process, every few milliseconds, so a
    credential passed on a child's command line is seen however briefly it lives."""

    def __init__(self) -> None:
        self.seen: set[bytes] = set()
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            for entry in Path("/proc").iterdir():
                if entry.name.isdigit():
                    with contextlib.suppress(OSError):
                        self.seen.add((entry / "cmdline").read_bytes())
            self.samples += 1
            self._stop.wait(0.005)

    def __enter__(self) -> CmdlineSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


def leaks(credentials: Mapping[str, str], written: Mapping[str, bytes]) -> list[str]:
    """`<credential> in <place>` for each credential found in each place written."""
    return [
        f"{what} in {where}"
        for what, value in credentials.items()
        for where, data in written.items()
        if value.encode() in data
    ]
