"""A count and its noun, agreeing: ``1 line``, ``2 lines``."""

from __future__ import annotations


def plural(count: int, word: str) -> str:
    """``1 step``, ``2 steps`` (``word`` takes an ``s``)."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
