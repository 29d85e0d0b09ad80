"""Run every `bench/bench_*.py` module's `main()` in turn and print its figures.

`python -m bench step cli` runs only `bench_step` and `bench_cli` (the full name
works too); a module run alone prints only its own figures.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path


def main() -> int:
    only = {name.removeprefix("bench_") for name in sys.argv[1:]}
    chosen = [
        path
        for path in sorted(Path(__file__).parent.glob("bench_*.py"))
        if not only or path.stem.removeprefix("bench_") in only
    ]
    for path in chosen:
        if len(chosen) > 1:
            print(f"== {path.stem}", flush=True)
        importlib.import_module(f"bench.{path.stem}").main()
    return 0


if __name__ == "__main__":
    sys.exit(main())
