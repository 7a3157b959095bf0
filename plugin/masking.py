"""The one secret masker: API keys never reach a log line, a message, a record or a report."""
from __future__ import annotations

import re

MASK = "***"
MIN_SECRET_LENGTH = 4
"""Shorter 'keys' are the placeholders local servers accept ('x', 'no'): no secret, and masking them
would garble every message."""
PART_LENGTH = 8
"""The shortest run of a key's characters masked on its own (`parts`): a server echoing the key without its
'sk-' prefix, or a part of it, gives away that much of the secret."""

KEY_PATTERN = re.compile(r"\bsk-[A-Za-z0-9_\-*]{8,}")
"""Text shaped like an OpenAI-style API key, masked even when the key itself is not known."""


def mask_secrets(text: str, secrets=(), *, key_shapes: bool = False, parts: bool = False) -> str:
    """`text` with every known secret (of at least 4 characters) replaced by ***; with `key_shapes`,
    anything shaped like a key too; with `parts`, every run of 8 or more characters of a secret as well (what a
    server's text may echo of the key)."""
    for secret in secrets:
        if not secret or len(secret) < MIN_SECRET_LENGTH:
            continue
        if parts and len(secret) >= PART_LENGTH:
            text = _mask_parts(text, secret)
        elif secret in text:
            text = text.replace(secret, MASK)
    return KEY_PATTERN.sub(MASK, text) if key_shapes else text


def _mask_parts(text: str, secret: str) -> str:
    """`text` with each stretch covered by 8-character windows that occur in `secret` replaced by one ***: one pass
    over the text with a set lookup per position (linear in the text, whatever the key's length)."""
    grams = {secret[i:i + PART_LENGTH] for i in range(len(secret) - PART_LENGTH + 1)}
    stretches: list[list[int]] = []  # [start, end) of each masked stretch, overlapping windows merged
    for i in range(len(text) - PART_LENGTH + 1):
        if text[i:i + PART_LENGTH] in grams:
            if stretches and i <= stretches[-1][1]:
                stretches[-1][1] = i + PART_LENGTH
            else:
                stretches.append([i, i + PART_LENGTH])
    if not stretches:
        return text
    pieces, kept = [], 0
    for start, end in stretches:
        pieces += [text[kept:start], MASK]
        kept = end
    return "".join(pieces + [text[kept:]])
