"""Reading one HTTP delivery: headers and body into what the inbox stores.

These are the bounded checks the edge makes before it stores anything, so a
signed but hostile body gets a 400 with the reason instead of a crash: the
headers, the body's size, nesting and number of values (measured with a few
passes of C-speed byte operations before any parser runs), that it is a JSON
object, and the two fields the inbox keeps beside the raw body, strictly
typed. Typing the rest of the payload is the worker's job (`webhooks.payloads`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from pydantic import BaseModel, ConfigDict, ValidationError

# GitHub caps payloads at 25 MB:
# https://docs.github.com/en/webhooks/webhook-events-and-payloads#payload-cap
MAX_BODY_BYTES = 25_000_000
# GitHub's payloads nest about a dozen levels; Python's json parser fails
# near 1,000 and pydantic and json.dumps in the worker recurse as well.
MAX_DEPTH = 128
# Values (containers, scalars, object members) in one body. A real 25 MB push
# holds well under this; a body of tiny lists would otherwise cost about 60
# bytes of memory per 3 bytes of input.
MAX_VALUES = 1_000_000
# The inbox columns: String(100) on both databases.
MAX_HEADER_CHARS = 100
# Installation ids are stored as BIGINT.
INT64_MAX = 2**63 - 1

# A JSON string token: the same lexical rule the parser uses (a backslash
# escapes the next byte), so brackets and commas inside strings are skipped.
# An unterminated string runs to the end (the parser refuses it later), and
# possessive loops keep the scan linear on any input.
_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+(?:"|\\?\Z)', re.DOTALL)
# Keep only brackets, and count both kinds alike: nesting is what is measured.
_BRACKETS = bytes.maketrans(b"{}", b"[]")
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_HEADER_VALUE = re.compile(r"[!-~]+")  # visible ASCII, no spaces or controls


class BadDelivery(ValueError):
    """The request is not a usable webhook delivery (answered 400)."""


@dataclass(frozen=True)
class IncomingDelivery:
    """What the inbox stores for one delivery: the JSON body as bytes, and the
    event, action and installation id checked to fit their columns."""

    id: str
    event: str
    action: str | None
    installation_id: int | None
    body: bytes


def check_headers(delivery_id: str | None, event: str | None) -> tuple[str, str]:
    """The delivery id and event name, refused unless they fit the inbox."""
    if not event:
        raise BadDelivery("missing X-GitHub-Event header")
    if not delivery_id:
        raise BadDelivery("missing X-GitHub-Delivery header")
    for name, value in (("X-GitHub-Delivery", delivery_id), ("X-GitHub-Event", event)):
        if len(value) > MAX_HEADER_CHARS:
            raise BadDelivery(f"{name} header longer than {MAX_HEADER_CHARS} characters")
        if not _HEADER_VALUE.fullmatch(value):
            raise BadDelivery(f"{name} header has characters other than visible ASCII")
    return delivery_id, event


def json_text_of(body: bytes, content_type: str | None) -> bytes:
    """The JSON text of the delivery, whether sent as JSON or as the `payload`
    field of a form (both are webhook content types on GitHub)."""
    if (content_type or "").split(";")[0].strip().lower() != "application/x-www-form-urlencoded":
        return body
    try:
        fields = parse_qs(body.decode("utf-8"), strict_parsing=True, max_num_fields=16)
    except (UnicodeDecodeError, ValueError):
        raise BadDelivery("form body cannot be decoded") from None
    if "payload" not in fields:
        raise BadDelivery("form body has no payload field")
    return fields["payload"][0].encode()


def check_shape(text: bytes) -> None:
    """Refuse a body nested deeper than MAX_DEPTH or holding more than
    MAX_VALUES values, before a parser spends memory or stack on it."""
    openers = text.count(b"[") + text.count(b"{")
    if openers <= MAX_DEPTH and len(text) <= MAX_VALUES:
        return  # cannot nest deeper than it opens, nor hold more values than bytes
    bare = _STRING.sub(b"0", text).translate(None, b" \t\r\n")
    # Every comma adds a value, every non-empty container its first one.
    empty = bare.count(b"[]") + bare.count(b"{}")
    values = bare.count(b",") + bare.count(b"[") + bare.count(b"{") - empty + 1
    if values > MAX_VALUES:
        raise BadDelivery(f"body has more than {MAX_VALUES} JSON values")
    brackets = bare.translate(_BRACKETS, _NOT_BRACKETS)
    del bare
    # Each pass removes every innermost pair, so the passes count the depth.
    for _ in range(MAX_DEPTH):
        if not brackets:
            return
        shorter = brackets.replace(b"[]", b"")
        if len(shorter) == len(brackets):
            raise BadDelivery("body is not JSON (unbalanced brackets)")
        brackets = shorter
    if brackets:
        raise BadDelivery(f"body nests deeper than {MAX_DEPTH} levels")


class _Envelope(BaseModel):
    """The two fields the inbox keeps; every other value is checked as JSON
    and skipped by pydantic-core's parser, never built as Python objects."""

    model_config = ConfigDict(extra="ignore")
    action: Any = None
    installation: Any = None


def envelope_of(text: bytes) -> dict[str, Any]:
    """`action` and `installation` of the JSON object; `check_shape` must have
    passed (the parser itself recurses)."""
    try:
        found = _Envelope.model_validate_json(text)
    except ValidationError as exc:
        kind = exc.errors()[0]["type"] if exc.error_count() else ""
        if kind == "model_type":
            raise BadDelivery("body is not a JSON object") from None
        raise BadDelivery("body is not JSON") from None
    except RecursionError:
        raise BadDelivery("body is not JSON") from None
    return {"action": found.action, "installation": found.installation}


def action_of(payload: dict[str, Any]) -> str | None:
    action = payload.get("action")
    if action is None:
        return None
    if not isinstance(action, str):
        raise BadDelivery(f"action must be a string, not {_json_type(action)}")
    if len(action) > MAX_HEADER_CHARS:
        raise BadDelivery(f"action longer than {MAX_HEADER_CHARS} characters")
    if not action.isprintable():
        raise BadDelivery("action contains control characters")
    return action


def installation_id_of(payload: dict[str, Any]) -> int | None:
    installation = payload.get("installation")
    if installation is None:
        return None
    if not isinstance(installation, dict):
        raise BadDelivery(f"installation must be an object, not {_json_type(installation)}")
    inst_id = installation.get("id")
    if type(inst_id) is not int:
        raise BadDelivery(f"installation.id must be an integer, not {_json_type(inst_id)}")
    if not 0 < inst_id <= INT64_MAX:
        raise BadDelivery("installation.id is outside the range of a 64-bit id")
    return inst_id


def parse_delivery(
    delivery_id: str | None, event: str | None, body: bytes, content_type: str | None
) -> IncomingDelivery:
    """Every check the edge makes on a signed request, in order; BadDelivery
    (a 400 with its message) on the first that fails."""
    delivery_id, event = check_headers(delivery_id, event)
    text = json_text_of(body, content_type)
    check_shape(text)
    payload = envelope_of(text)
    return IncomingDelivery(
        id=delivery_id,
        event=event,
        action=action_of(payload),
        installation_id=installation_id_of(payload),
        body=text,
    )


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
