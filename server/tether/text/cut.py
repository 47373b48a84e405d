"""Long text cut in the middle, head and tail kept: tool results, event previews."""

from __future__ import annotations

MAX_RESULT_CHARS = 24_000
"""A tool result longer than this is cut (head and tail kept) before it enters history."""


def cut_middle(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    """``text`` with its middle replaced by a marker when longer than ``limit``."""
    if len(text) <= limit:
        return text
    half = limit // 2
    cut = len(text) - 2 * half
    return f"{text[:half]}\n… [{cut} characters cut] …\n{text[-half:]}"
