"""Run every `bench/bench_*.py` module's `main()` in turn and print its figures."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main() -> int:
    only = set(sys.argv[1:])
    for path in sorted(Path(__file__).parent.glob("bench_*.py")):
        if only and path.stem not in only:
            continue
        print(f"== {path.stem}", flush=True)
        importlib.import_module(f"bench.{path.stem}").main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
