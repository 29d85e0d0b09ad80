"""GitHub's REST OpenAPI description (`@octokit/openapi`) as a strict gate:
route, method and request body of every request; response bodies too.

OAS 3.0 schemas are checked with `openapi-schema-validator` (so `nullable`
is honoured), with `$ref`s resolved inside the one description document.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

from openapi_schema_validator import OAS30Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4

URN = "urn:github-rest"
GREEDY = {"path", "ref"}  # parameters GitHub lets span slashes
METHODS = ("get", "put", "post", "patch", "delete", "head")


def _pointer(*parts: str) -> str:
    return "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


class OpenApi:
    def __init__(self, path: Path) -> None:
        self.doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        self._registry: Registry = Registry().with_resource(
            URN, Resource.from_contents(self.doc, default_specification=DRAFT4)
        )
        self._routes: list[tuple[tuple[int, int], re.Pattern[str], str]] = []
        for template in self.doc["paths"]:
            regex = "^"
            literal = 0
            greedy = 0
            for segment in template.strip("/").split("/"):
                match = re.fullmatch(r"\{(\w+)\}", segment)
                if match:
                    name = match.group(1)
                    greedy += name in GREEDY
                    regex += f"/(?P<{name}>.+)" if name in GREEDY else f"/(?P<{name}>[^/]+)"
                else:
                    literal += 1
                    regex += "/" + re.escape(segment)
            self._routes.append(((greedy, -literal), re.compile(regex + "$"), template))
        self._routes.sort(key=lambda r: r[0])
        self._validators: dict[str, OAS30Validator] = {}

    def match(self, path: str) -> tuple[str, dict[str, str]] | None:
        for _, regex, template in self._routes:
            found = regex.match(path)
            if found:
                return template, found.groupdict()
        return None

    def operation(self, template: str, method: str) -> dict[str, Any] | None:
        op = self.doc["paths"][template].get(method.lower())
        return op if isinstance(op, dict) else None

    def _validator(self, pointer: str) -> OAS30Validator:
        validator = self._validators.get(pointer)
        if validator is None:
            validator = OAS30Validator({"$ref": f"{URN}#/{pointer}"}, registry=self._registry)
            self._validators[pointer] = validator
        return validator

    def body_errors(self, template: str, method: str, body: Any) -> list[str]:
        """Why `body` is not a valid request body for the operation (empty when it is)."""
        op = self.operation(template, method) or {}
        request = op.get("requestBody")
        if request is None:
            return [] if body is None else ["this operation takes no request body"]
        request = self._resolve(request)
        if body is None:
            return ["a request body is required"] if request.get("required") else []
        if "application/json" not in request.get("content", {}):
            return []
        pointer = _pointer(
            "paths", template, method.lower(), "requestBody", "content", "application/json"
        )
        if "$ref" in op["requestBody"]:
            ref = op["requestBody"]["$ref"].lstrip("#/")
            pointer = ref + "/" + _pointer("content", "application/json")
        return _messages(self._validator(pointer + "/schema"), body)

    def response_errors(self, template: str, method: str, status: int, body: Any) -> list[str]:
        op = self.operation(template, method) or {}
        response = op.get("responses", {}).get(str(status))
        if response is None:
            return [f"GitHub documents no {status} answer here"]
        response = self._resolve(response)
        if body is None or "application/json" not in response.get("content", {}):
            return []
        base = (
            response["_pointer"]
            if "_pointer" in response
            else _pointer("paths", template, method.lower(), "responses", str(status))
        )
        pointer = base + "/" + _pointer("content", "application/json", "schema")
        return _messages(self._validator(pointer), body)

    def _resolve(self, node: dict[str, Any]) -> dict[str, Any]:
        if "$ref" not in node:
            return node
        ref = node["$ref"].lstrip("#/")
        target: Any = self.doc
        for part in ref.split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        return {**target, "_pointer": ref}

    def example(self, name: str) -> Any:
        return json.loads(json.dumps(self.doc["components"]["examples"][name]["value"]))


def _messages(validator: OAS30Validator, body: Any) -> list[str]:
    errors = []
    for error in validator.iter_errors(body):
        if error.validator == "enum" and error.instance is None and error.schema.get("nullable"):
            continue  # OAS 3.0: `nullable` admits null even beside an enum
        where = "/".join(str(p) for p in error.absolute_path) or "(body)"
        errors.append(f"{where}: {error.message}")
    return errors[:5]


@cache
def load(path: Path) -> OpenApi:
    return OpenApi(path)
