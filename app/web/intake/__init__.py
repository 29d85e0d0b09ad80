"""The intake: how the webhook edge stores a delivery before answering its
sender. `Intake` is the port the edge stores through; `GroupCommit` serves it
inside the process, `IntakeClient` over a socket to the `odw intake` process.
"""

from __future__ import annotations

from typing import Protocol

from app.store.inbox import NewDelivery


class Intake(Protocol):
    """What the webhook edge stores through: `record` returns once the
    delivery is durably stored (True) or found stored already (False), and
    raises when it could not be stored."""

    def record(self, delivery: NewDelivery) -> bool: ...

    def ready(self) -> bool:
        """Whether a delivery sent now would be taken (for `/healthz`)."""
        ...
