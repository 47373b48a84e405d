"""Which models think: without any SDK, for the providers (what a request carries)."""

from __future__ import annotations

import re

_NO_THINKING = re.compile(r"claude-(instant|2|3-(?!7))")
"""Claude models that cannot think: before Claude 3.7 Sonnet."""

_NO_REASONING = re.compile(r"(ft:)?(gpt-4|gpt-3\.5|chatgpt-4o)")
"""OpenAI models that do not reason: the API refuses reasoning settings for them."""


def claude_thinks(model: str) -> bool:
    """Whether the Claude ``model`` supports extended thinking (3.7 Sonnet and later)."""
    return _NO_THINKING.match(model) is None


def openai_reasons(model: str) -> bool:
    """Whether the OpenAI ``model`` is a reasoning model (the o-series, GPT-5 and later,
    Codex)."""
    return _NO_REASONING.match(model) is None
