"""The STA-CoT reasoning engine: memory cache, loop (Algorithms 1-2), run records, reports."""
