"""The integration report as pydantic models hold it: `Report`.

`IntegrationReport` is a plain `Value`, so that `odw integrate` (once per
landing) imports neither pydantic nor `dataclasses`. The models that embed it
(events, inputs) declare `Report`, which validates and dumps it exactly as
the frozen, slotted dataclass with camelCase aliases it used to be: pydantic
builds its schema for such a dataclass (the twin below), so the installed
pydantic decides every detail as before, and `Report` converts at the edges.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Annotated, Any

from pydantic import GetCoreSchemaHandler
from pydantic_core import core_schema

from app.core.integration import IntegrationReport, camel


def _twin() -> type[Any]:
    """The report as a frozen, slotted dataclass: its fields, annotations and defaults."""
    hints = typing.get_type_hints(IntegrationReport)
    defaults = IntegrationReport.__init__.__defaults__ or ()
    names = IntegrationReport.FIELDS
    twin: type[Any] = dataclasses.make_dataclass(
        "IntegrationReport",
        [
            (name, hints[name], dataclasses.field(default=default))
            for name, default in zip(names, defaults, strict=True)
        ],
        frozen=True,
        slots=True,
    )
    twin.__module__ = IntegrationReport.__module__
    twin.__qualname__ = IntegrationReport.__qualname__
    twin.__doc__ = IntegrationReport.__doc__  # the JSON schema's description
    twin.__pydantic_config__ = {"alias_generator": camel, "populate_by_name": True}
    return twin


_TWIN = _twin()


def _validate(value: Any, handler: core_schema.ValidatorFunctionWrapHandler) -> IntegrationReport:
    if isinstance(value, IntegrationReport):
        return value  # an instance passes as it is, as it did as a dataclass
    twin = handler(value)
    return IntegrationReport(*(getattr(twin, name) for name in IntegrationReport.FIELDS))


def _serialize(report: Any, handler: core_schema.SerializerFunctionWrapHandler) -> Any:
    if isinstance(report, IntegrationReport):
        report = _TWIN(*(getattr(report, name) for name in IntegrationReport.FIELDS))
    return handler(report)


class _AsDataclass:
    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        twin = handler.generate_schema(_TWIN)
        return core_schema.no_info_wrap_validator_function(
            _validate,
            twin,
            serialization=core_schema.wrap_serializer_function_ser_schema(_serialize, schema=twin),
        )


Report = Annotated[IntegrationReport, _AsDataclass()]
