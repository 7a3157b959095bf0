"""The one secret masker: API keys never reach a log line, a message, a record or a report."""
from __future__ import annotations

import re

MASK = "***"
MIN_SECRET_LENGTH = 4
"""Shorter 'keys' are the placeholders local servers accept ('x', 'no'): no secret, and masking them
would garble every message."""

KEY_PATTERN = re.compile(r"\bsk-[A-Za-z0-9_\-*]{8,}")
"""Text shaped like an OpenAI-style API key, masked even when the key itself is not known."""


def mask_secrets(text: str, secrets=(), *, key_shapes: bool = False) -> str:
    """`text` with every known secret (of at least 4 characters) replaced by ***; with `key_shapes`,
    anything shaped like a key too."""
    for secret in secrets:
        if secret and len(secret) >= MIN_SECRET_LENGTH and secret in text:
            text = text.replace(secret, MASK)
    return KEY_PATTERN.sub(MASK, text) if key_shapes else text
