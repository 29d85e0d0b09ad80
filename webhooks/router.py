"""Handlers registered per event and action; one router per feature module,
combined at the entrypoint (`Router(a.router, b.router)`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

Handler = Callable[..., Any]
H = TypeVar("H", bound=Handler)


class Router:
    def __init__(self, *others: Router) -> None:
        self._routes: dict[tuple[str, str | None], list[Handler]] = {}
        for other in others:
            for key, handlers in other._routes.items():
                self._routes.setdefault(key, []).extend(handlers)

    def register(self, event: str, action: str | None = None) -> Callable[[H], H]:
        """Decorator: call the handler for `event` (and only `action`, if given)."""

        def add(handler: H) -> H:
            self._routes.setdefault((event, action), []).append(handler)
            return handler

        return add

    def handlers_for(self, event: str, action: str | None) -> list[Handler]:
        found = list(self._routes.get((event, None), []))
        if action is not None:
            found += self._routes.get((event, action), [])
        return found

    def events(self) -> set[str]:
        return {event for event, _ in self._routes}
