"""Published webhook examples predate some fields the schemas now require
(`custom_properties`, `reactions`, ...). The fake fills such missing required
fields with type-correct neutral values taken from `@octokit/webhooks-schemas`;
everything with a meaning (ids, refs, SHAs, states, URLs) comes from its state."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator

from tests.fakegithub.oracles import WEBHOOK_SCHEMAS


@cache
def _schema(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


@cache
def _validator(name: str) -> Draft7Validator | None:
    schema = _schema(WEBHOOK_SCHEMAS)
    if schema is None or name not in schema["definitions"]:
        return None
    return Draft7Validator({"$ref": f"#/definitions/{name}", **schema})


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    schema = _schema(WEBHOOK_SCHEMAS) or {}
    while "$ref" in node:
        target: Any = schema
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target[part]
        node = target
    return node


def neutral(node: dict[str, Any]) -> Any:
    node = _resolve(node)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return None if None in node["enum"] else node["enum"][0]
    for key in ("oneOf", "anyOf"):
        if key in node:
            options = [_resolve(o) for o in node[key]]
            if any(o.get("type") == "null" for o in options):
                return None
            return neutral(options[0])
    kind = node.get("type")
    if isinstance(kind, list):
        if "null" in kind:
            return None
        kind = kind[0]
    if kind == "object":
        value: dict[str, Any] = {}
        for name in node.get("required", []):
            value[name] = neutral(node.get("properties", {}).get(name, {}))
        return value
    return {"string": "", "integer": 0, "number": 0, "boolean": False, "array": []}.get(str(kind))


def _fill(error: Any) -> bool:
    if error.validator == "required" and isinstance(error.instance, dict):
        changed = False
        for name in error.validator_value:
            if name not in error.instance:
                spec = error.schema.get("properties", {}).get(name, {})
                error.instance[name] = neutral(spec)
                changed = True
        return changed
    if error.validator in ("anyOf", "oneOf"):
        return any(_fill(sub) for sub in error.context or [])
    return False


def complete(event: str, action: str | None, payload: dict[str, Any]) -> None:
    validator = _validator(f"{event}${action or 'event'}")
    if validator is None:
        return
    for _ in range(10):
        filled = [_fill(e) for e in validator.iter_errors(payload)]  # fill all, then check
        if not any(filled):
            return
