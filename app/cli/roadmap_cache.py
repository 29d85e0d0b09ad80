"""A roadmap's parsed model kept between runs of `odw roadmap` and `odw next`.

Reading is nearly all of what those commands do, and a roadmap changes far
less often than it is read (a maintainer or a script asks for `next` again after
every landing). One entry per roadmap path holds the file's text and what parsing
it gave; it is used only when that text equals the file's text character for
character and it was written by the same parser (odw's version and the parser
modules' sizes and modification times), so a stale entry is never used. Any
entry that cannot be read is a miss, and writing is best-effort: a read-only
home just parses every time.

`ODW_CACHE_DIR` names the directory (default `$XDG_CACHE_HOME/odw`, else
`~/.cache/odw`); set to an empty string, it turns the cache off.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import zlib
from pathlib import Path

from app import __version__
from app.core import roadmap as model
from app.core.roadmap import Problem, Roadmap, Task

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = 1
# A text this long is parsed every time rather than kept: an entry holds the text
# and its tasks, about three times its size, and no roadmap is a library's worth.
MAX_CACHED_CHARS = 8_000_000
# The files whose code decides what a roadmap parses to, and what an entry holds;
# named, not imported: a read from the cache needs none of the parser's modules.
_CORE = Path(model.__file__).parent
_PARSER = (
    *(_CORE / name for name in ("dependency_read.py", "dependency_text.py", "graph.py",
                                "headline.py", "requires.py", "roadmap.py", "roadmap_parse.py",
                                "roadmap_scan.py", "values.py")),
    Path(__file__),
)  # fmt: skip


def parse_roadmap(text: str) -> Roadmap:
    """The parser, imported only when a read misses the cache."""
    from app.core.roadmap_parse import parse_roadmap as parse

    return parse(text)


def cache_dir() -> Path | None:
    """Where entries live, or None when `ODW_CACHE_DIR` is set empty."""
    chosen = os.environ.get("ODW_CACHE_DIR")
    if chosen is not None:
        return Path(chosen) if chosen else None
    base = os.environ.get("XDG_CACHE_HOME")
    return (Path(base) if base else Path.home() / ".cache") / "odw"


def _parser_fingerprint() -> tuple[object, ...]:
    stats = [path.stat() for path in _PARSER]
    return (__version__, *((s.st_size, s.st_mtime_ns) for s in stats))


def _entry_path(directory: Path, roadmap_path: str) -> Path:
    return directory / "roadmaps" / f"{zlib.crc32(os.fsencode(roadmap_path)):08x}.marshal"


def read_roadmap(roadmap_path: str, text: str, directory: Path | None = None) -> Roadmap:
    """`parse_roadmap(text)`, from the entry for `roadmap_path` when it holds this text."""
    directory = cache_dir() if directory is None else directory
    if directory is None or len(text) > MAX_CACHED_CHARS:
        return parse_roadmap(text)
    roadmap_path = str(Path(roadmap_path).absolute())
    entry = _entry_path(directory, roadmap_path)
    try:
        fingerprint = _parser_fingerprint()
    except OSError:  # the parser's own files are gone (a zipped install): nothing to trust
        return parse_roadmap(text)
    cached = _load(entry, roadmap_path, text, fingerprint)
    if cached is not None:
        return cached
    roadmap = parse_roadmap(text)
    _store(entry, roadmap_path, text, fingerprint, roadmap)
    return roadmap


def _load(entry: Path, roadmap_path: str, text: str, fingerprint: object) -> Roadmap | None:
    try:
        # Only odw writes here (a directory of mode 0700), and an entry counts only
        # with the right format, parser and text; marshal runs no code. Read whole:
        # `marshal.load` on a file reads it a few bytes at a time, five times slower.
        data = marshal.loads(entry.read_bytes())  # noqa: S302
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not (
        type(data) is tuple
        and len(data) == 7
        and data[:3] == (FORMAT, fingerprint, roadmap_path)
        and data[3] == text
    ):
        return None
    try:
        return Roadmap(
            tasks=tuple(map(Task.of, data[4])),
            errors=tuple(map(Problem.of, data[5])),
            warnings=tuple(map(Problem.of, data[6])),
        )
    except (TypeError, AttributeError, KeyError):  # not what this format writes
        return None


def _store(entry: Path, roadmap_path: str, text: str, fingerprint: object, r: Roadmap) -> None:
    data: tuple[Any, ...] = (
        FORMAT,
        fingerprint,
        roadmap_path,
        text,
        [t.__dict__ for t in r.tasks],
        [p.__dict__ for p in r.errors],
        [p.__dict__ for p in r.warnings],
    )
    temporary = entry.with_name(f"{entry.name}.{os.getpid()}.tmp")
    try:
        entry.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary.write_bytes(marshal.dumps(data))
        temporary.replace(entry)  # readers see the old entry or the new one, never half
    except OSError:
        with contextlib.suppress(OSError):
            temporary.unlink()
