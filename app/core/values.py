"""Immutable records for the commands that start a process per call, cheap to import and build.

`odw next` reads thousands of tasks in a process that lives a fraction of a
second. A frozen dataclass would cost it the import of `dataclasses` (and
`inspect` with it, a quarter of the command's own time) and one
`object.__setattr__` per field per task. A `Value` keeps its fields in its
instance dictionary, so a record is made in one step from a dictionary
(`Value.of`), which is also how a cached read is brought back.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Self

_new = object.__new__
_set = object.__setattr__


class Value:
    """Fields in `__dict__`; equal, hashed and printed by the public ones (no leading `_`)."""

    def __init__(self, **fields: Any) -> None:
        _set(self, "__dict__", fields)

    @classmethod
    def of(cls, fields: dict[str, Any]) -> Self:
        """A record whose fields are `fields` (the dictionary itself, not a copy)."""
        value = _new(cls)
        _set(value, "__dict__", fields)
        return value

    def replace(self, **changes: Any) -> Self:
        """A copy with some fields changed (`dataclasses.replace`)."""
        return self.of({**self.__dict__, **changes})

    def _public(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k[0] != "_"}

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: cannot delete {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, Value)
        return self._public() == other._public()

    def __hash__(self) -> int:
        return hash((type(self).__name__, *self._public().values()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self._public().items())
        return f"{type(self).__name__}({fields})"
