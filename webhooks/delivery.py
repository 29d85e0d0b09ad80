"""Reading one HTTP delivery: headers and body into what the inbox stores."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

# GitHub caps payloads at 25 MB:
# https://docs.github.com/en/webhooks/webhook-events-and-payloads#payload-cap
MAX_BODY_BYTES = 25_000_000


class BadDelivery(ValueError):
    """The request is not a usable webhook delivery (answered 400)."""


@dataclass(frozen=True)
class IncomingDelivery:
    id: str
    event: str
    action: str | None
    installation_id: int | None
    payload: dict[str, Any]


def payload_of(body: bytes, content_type: str | None) -> dict[str, Any]:
    """The JSON object of the delivery, whether sent as JSON or as the
    `payload` field of a form (both are webhook content types on GitHub)."""
    if (content_type or "").split(";")[0].strip() == "application/x-www-form-urlencoded":
        try:
            fields = parse_qs(body.decode("utf-8"), strict_parsing=True)
        except (UnicodeDecodeError, ValueError):
            raise BadDelivery("form body cannot be decoded") from None
        if "payload" not in fields:
            raise BadDelivery("form body has no payload field")
        raw: str | bytes = fields["payload"][0]
    else:
        raw = body
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        raise BadDelivery("body is not JSON") from None
    if not isinstance(data, dict):
        raise BadDelivery("body is not a JSON object")
    return data


def parse_delivery(
    delivery_id: str | None, event: str | None, body: bytes, content_type: str | None
) -> IncomingDelivery:
    if not event:
        raise BadDelivery("missing X-GitHub-Event header")
    if not delivery_id:
        raise BadDelivery("missing X-GitHub-Delivery header")
    if len(delivery_id) > 100 or len(event) > 100:
        raise BadDelivery("X-GitHub-Delivery or X-GitHub-Event header too long")
    payload = payload_of(body, content_type)
    action = payload.get("action")
    installation = payload.get("installation")
    inst_id = installation.get("id") if isinstance(installation, dict) else None
    return IncomingDelivery(
        id=delivery_id,
        event=event,
        action=action if isinstance(action, str) else None,
        installation_id=inst_id if isinstance(inst_id, int) else None,
        payload=payload,
    )
