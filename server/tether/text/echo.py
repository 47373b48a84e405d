"""A client's value quoted back in an error message, cut short (the server's answers and
``tether rules``, which answers in-process, say the same)."""

from __future__ import annotations

MAX_ECHO = 200
"""Characters of a client's value quoted back in an error message."""


def clip(text: str, limit: int = MAX_ECHO) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"
