from __future__ import annotations

import pytest

from webhooks.signature import sign, verify

# https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries#testing-the-webhook-payload-validation
VECTOR_SECRET = "It's a Secret to Everybody"
VECTOR_BODY = b"Hello, World!"
VECTOR_SIGNATURE = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"


def test_githubs_documented_test_vector() -> None:
    assert sign(VECTOR_SECRET, VECTOR_BODY) == VECTOR_SIGNATURE
    assert verify(VECTOR_BODY, VECTOR_SIGNATURE, [VECTOR_SECRET])


@pytest.mark.parametrize(
    ("header", "secrets"),
    [
        (None, [VECTOR_SECRET]),
        ("", [VECTOR_SECRET]),
        (VECTOR_SIGNATURE.removeprefix("sha256="), [VECTOR_SECRET]),
        ("sha1=" + VECTOR_SIGNATURE[7:], [VECTOR_SECRET]),
        (VECTOR_SIGNATURE[:-1] + "f", [VECTOR_SECRET]),
        (VECTOR_SIGNATURE.upper(), [VECTOR_SECRET]),
        (VECTOR_SIGNATURE, ["another secret"]),
        (VECTOR_SIGNATURE, []),
        (VECTOR_SIGNATURE + "\u00e9", [VECTOR_SECRET]),
    ],
    ids=[
        "missing",
        "empty",
        "no-prefix",
        "sha1-prefix",
        "one-digit-off",
        "uppercase",
        "wrong-secret",
        "no-secret",
        "non-ascii",
    ],
)
def test_anything_else_is_refused(header: str | None, secrets: list[str]) -> None:
    assert not verify(VECTOR_BODY, header, secrets)


def test_a_changed_body_is_refused() -> None:
    assert not verify(b"Hello, World?", VECTOR_SIGNATURE, [VECTOR_SECRET])


def test_rotation_accepts_current_and_previous_secret() -> None:
    old = sign("old secret", VECTOR_BODY)
    new = sign("new secret", VECTOR_BODY)
    assert verify(VECTOR_BODY, old, ["new secret", "old secret"])
    assert verify(VECTOR_BODY, new, ["new secret", "old secret"])
    assert not verify(VECTOR_BODY, old, ["new secret"])
