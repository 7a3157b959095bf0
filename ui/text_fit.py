"""Text laid out to a width in pixels: greedy word wrap by the font's measure (a tree item shows its text on as many
lines as it needs instead of cutting it)."""
from __future__ import annotations


def wrap_to_width(text: str, metrics, width: int) -> str:
    """`text` with line breaks so that no line is wider than `width` pixels in `metrics` (a QFontMetrics); a word
    wider than a line is broken between characters. Existing line breaks are kept."""
    width = max(int(width), 40)
    out = []
    for paragraph in str(text).split("\n"):
        line = ""
        for word in paragraph.split(" "):
            candidate = f"{line} {word}" if line else word
            if metrics.horizontalAdvance(candidate) <= width:
                line = candidate
                continue
            if line:
                out.append(line)
            line = ""
            for char in word:  # a word too long for a line of its own
                if line and metrics.horizontalAdvance(line + char) > width:
                    out.append(line)
                    line = ""
                line += char
        out.append(line)
    return "\n".join(out)


def unwrapped(wrapped: str, original: str) -> bool:
    """Whether `wrapped` is `original` with line breaks only (no text lost)."""
    return "".join(wrapped.split()) == "".join(str(original).split())
