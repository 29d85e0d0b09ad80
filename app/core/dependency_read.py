"""What an open task waits for, from every form its author wrote, and what could not be read.

`dependency_text` finds the sentences; this module needs the whole roadmap to
finish them: a range across steps (`7.1.1-7.3.1`) is filled with the task ids
between its ends, a reference to the task's own step or phase means its tasks
before the task, and a step's or phase's opening applies to each of its tasks.
Prose, alternatives and sentences that name nothing readable become notes, the
warnings `parse_roadmap` reports with the clause and its line.
"""

from __future__ import annotations

from bisect import bisect_left
from functools import partial

from app.core.dependency_text import Sentence, may_name_dependencies, openings, sentences
from app.core.requires import id_key
from app.core.roadmap import Problem
from app.core.roadmap_scan import Draft, normalized

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from app.core.requires import Clause


class Reading:
    """One open task's dependencies as they are read: local ids, self-references,
    external references, each with the clause that named it, and the notes."""

    __slots__ = ("external", "notes", "requires", "selfs")

    def __init__(self) -> None:
        self.requires: dict[str, str] = {}
        self.selfs: dict[str, str] = {}
        self.external: dict[str, str] = {}
        self.notes: list[Problem] = []


class Context:
    """The roadmap-wide facts the reading of one task needs, each found once, when first asked."""

    __slots__ = ("_keys", "_known", "_lines", "drafts", "openings", "text")

    def __init__(self, drafts: list[Draft], text: str) -> None:
        self.drafts = drafts
        self.text = normalized(text)
        # Each opening with the sentences it holds, read once for all of its tasks.
        self.openings = [(o, sentences(o.text)) for o in openings(self.text)]
        self._keys: list[tuple[tuple[tuple[int, str], ...], str]] | None = None
        self._known: set[str] | None = None
        self._lines: list[str] | None = None

    def names_something(self, dotted: str) -> bool:
        if self._known is None:
            self._known = set()
            for d in self.drafts:
                parts = d.id.split(".")
                self._known.update(".".join(parts[:k]) for k in range(1, len(parts) + 1))
        return dotted in self._known

    def between(self, lo: str, hi: str) -> list[str]:
        """Task ids from `lo` to `hi` in id order, and every task under `hi` when it is a prefix."""
        if self._keys is None:
            self._keys = sorted((id_key(d.id), d.id) for d in self.drafts)
        keys, low, high = self._keys, id_key(lo), id_key(hi)
        out = []
        for key, tid in keys[bisect_left(keys, (low, "")) :]:
            if key > high and key[: len(high)] != high:
                break
            out.append(tid)
        return out

    def before(self, prefix: str, position: int) -> list[str]:
        """Ids of the tasks under `prefix` that come before task `position` in the document."""
        head = prefix + "."
        return [d.id for d in self.drafts[:position] if d.id.startswith(head)]

    def line_of(self, start: int, clause: str) -> int:
        """The line, from task line `start` on, where a clause of the task's text begins (the
        task's line if it cannot be found: the scanner keeps no line per bullet)."""
        if self._lines is None:
            self._lines = self.text.split("\n")
        lines, words = self._lines, clause.split()
        for k in (3, 2, 1):
            wanted = " ".join(words[:k])
            for n in range(start, min(len(lines), start + 200) + 1):
                if wanted in " ".join(lines[n - 1].split()):
                    return n
        return start


def read_open_task(d: Draft, position: int, texts: list[str], rm: Context) -> Reading:
    """Every dependency of open task `d`, the `position`th draft: from `texts` (its title and
    bullets but the success one) and the openings of its step and phase."""
    reading = Reading()
    task = f"task {d.id} (line {d.line})"
    for text in texts:
        if may_name_dependencies(text):
            for s in sentences(text):
                at = _Where(task, d.id, partial(rm.line_of, d.line, s.clause.text))
                _take(reading, d, position, s, at, rm)
    for opening, found in rm.openings:
        if opening.heading < d.line < opening.end:
            for s in found:
                subject = f"each open task under the heading on line {opening.heading}"
                at = _Where(subject, d.id, partial(opening.line_of, s.offset), opening=True)
                _take(reading, d, position, s, at, rm)
    return reading


class _Where:
    """Who a note is about and the line of its clause: one task, or each task of a section.

    The line is found (`locate`) only when a note needs it: a task's clause is
    looked for in the file, since the scanner keeps no line per bullet.
    """

    __slots__ = ("_line", "_locate", "opening", "subject", "tid")

    def __init__(
        self, subject: str, tid: str, locate: Callable[[], int], *, opening: bool = False
    ) -> None:
        self.subject, self.tid, self.opening = subject, tid, opening
        self._locate = locate
        self._line: int | None = None

    @property
    def line(self) -> int:
        if self._line is None:
            self._line = self._locate()
        return self._line

    @property
    def place(self) -> str:
        return f"line {self.line}" + (
            ", the paragraph opening that section" if self.opening else ""
        )

    def ids(self, *more: str) -> tuple[str, ...]:
        return (self.tid, *more)


def _take(reading: Reading, d: Draft, position: int, s: Sentence, at: _Where, rm: Context) -> None:
    clause = s.clause
    local = list(clause.local)
    for lo, hi in clause.spans:  # never the task itself; its own step or phase: see below
        own = [p for p in (lo, hi) if d.id.startswith(p + ".")]
        local.extend(
            t
            for t in rm.between(lo, hi)
            if t not in local and t != d.id and not any(t.startswith(p + ".") for p in own)
        )
    unknown = [dep for dep in local if not rm.names_something(dep)] if s.prose else []
    local = [dep for dep in local if dep not in unknown]
    if unknown or s.quoted or not (local or clause.external):
        reading.notes.append(_unread(at, clause, unknown, s.quoted))
    if s.prose and (local or clause.external):
        named = ", ".join([*local, *clause.external])
        reading.notes.append(
            Problem(
                kind="prose-dependency",
                ids=at.ids(*local),
                lines=(at.line,),
                message=f"{at.subject} waits for {named}, read from prose on {at.place}: "
                f"{clause.text!r}; write `Requires {named}.` to make it plain",
            )
        )
    if clause.alternative:
        reading.notes.append(
            Problem(
                kind="alternative-dependency",
                ids=at.ids(*local),
                lines=(at.line,),
                message=f"{at.subject} is offered a choice on {at.place}: {clause.text!r}; "
                f"read as all of {', '.join(local)}, and it waits for each; rewrite it as the "
                "one `Requires` clause meant",
            )
        )
    for dep in local:
        if d.id.startswith(dep + "."):  # its own step or phase: the tasks of it before it
            reading.selfs.setdefault(dep, clause.text)
            for earlier in rm.before(dep, position):
                reading.requires.setdefault(earlier, clause.text)
        else:
            reading.requires.setdefault(dep, clause.text)
    for ref in clause.external:
        reading.external.setdefault(ref, clause.text)


def _unread(at: _Where, clause: Clause, unknown: list[str], quoted: tuple[str, ...]) -> Problem:
    """What part of a dependency sentence was not read, and why."""
    why = []
    if unknown:
        why.append(f"names {', '.join(unknown)}, which the roadmap does not hold")
    if quoted:
        why.append(f"names {', '.join(quoted)} only in a code span, which is quoted text")
    what = " and ".join(why) or "names no task, step or phase ODW can read"
    return Problem(
        kind="unread-dependency",
        ids=at.ids(*unknown, *quoted),
        lines=(at.line,),
        message=f"{at.subject}: {clause.text!r} on {at.place} looks like a dependency but "
        f"{what}; that part is not read and nothing waits for it; write "
        "`Requires <id>.` if something should",
    )
