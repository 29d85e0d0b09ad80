"""SHA-256 of the names ODW keeps on disk (mirror directories, merge lock files).

`hashlib` loads OpenSSL's library when imported, about 2 ms of every `odw
integrate` process (one per landing). CPython's own SHA-256 module, the one
`hashlib` falls back to without OpenSSL, gives the same digest without it.
"""

from __future__ import annotations

import importlib
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Protocol

    class _Digest(Protocol):
        def hexdigest(self) -> str: ...


def _constructor() -> Callable[[bytes], _Digest]:
    name = "_sha2" if sys.version_info >= (3, 12) else "_sha256"  # its name in CPython
    try:
        builtin: Callable[[bytes], _Digest] = importlib.import_module(name).sha256
    except (ImportError, AttributeError):  # another interpreter: whatever hashlib has
        import hashlib

        return hashlib.sha256
    return builtin


_SHA256 = _constructor()


def sha256_hex(text: str) -> str:
    """`hashlib.sha256(text.encode()).hexdigest()`."""
    return _SHA256(text.encode()).hexdigest()
