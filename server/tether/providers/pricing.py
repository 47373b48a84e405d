"""What a model call costs: a per-model price table (USD per million tokens).

The built-in table holds list prices as published by OpenAI and Anthropic (standard tier,
short context); the ``prices`` setting adds models and overrides these. A model in neither
has no known cost: its calls report tokens and a cost of ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from tether_protocol.config import ModelPrice


def _openai(input_: float, cached: float, output: float) -> ModelPrice:
    return ModelPrice(input_per_m_tok=input_, output_per_m_tok=output, cache_read_per_m_tok=cached)


def _anthropic(input_: float, output: float) -> ModelPrice:
    # Anthropic's published multipliers: cache hits 0.1x input, 5-minute cache writes 1.25x.
    return ModelPrice(
        input_per_m_tok=input_,
        output_per_m_tok=output,
        cache_read_per_m_tok=round(input_ * 0.1, 6),
        cache_write_per_m_tok=round(input_ * 1.25, 6),
    )


BUILTIN_PRICES: Mapping[str, ModelPrice] = {
    # OpenAI: input, cached input, output
    "gpt-6.2-sol": _openai(2.00, 0.10, 10.00),
    "gpt-6.1-sol": _openai(2.00, 0.10, 10.00),
    "gpt-6-sol": _openai(2.00, 0.20, 10.00),
    "gpt-6-luna": _openai(0.10, 0.01, 0.50),
    "gpt-5.5": _openai(5.00, 0.50, 30.00),
    "gpt-5.4": _openai(2.50, 0.25, 15.00),
    "gpt-5.4-mini": _openai(0.75, 0.075, 4.50),
    "gpt-5.4-nano": _openai(0.20, 0.02, 1.25),
    "gpt-5.2": _openai(1.75, 0.175, 14.00),
    "gpt-5.1": _openai(1.25, 0.125, 10.00),
    "gpt-5": _openai(1.25, 0.125, 10.00),
    "gpt-5-mini": _openai(0.25, 0.025, 2.00),
    "gpt-5-nano": _openai(0.05, 0.005, 0.40),
    "gpt-4.1": _openai(2.00, 0.50, 8.00),
    "gpt-4.1-mini": _openai(0.40, 0.10, 1.60),
    "gpt-4.1-nano": _openai(0.10, 0.025, 0.40),
    "gpt-4o": _openai(2.50, 1.25, 10.00),
    "gpt-4o-mini": _openai(0.15, 0.075, 0.60),
    "o3": _openai(2.00, 0.50, 8.00),
    "o4-mini": _openai(1.10, 0.275, 4.40),
    # Anthropic: input, output
    "claude-opus-5-5": _anthropic(4.00, 20.00),
    "claude-sonnet-5-5": _anthropic(2.00, 10.00),
    "claude-opus-5": _anthropic(5.00, 25.00),
    "claude-sonnet-5": _anthropic(2.00, 10.00),
    "claude-opus-4-6": _anthropic(5.00, 25.00),
    "claude-opus-4-5": _anthropic(5.00, 25.00),
    "claude-opus-4-1": _anthropic(15.00, 75.00),
    "claude-opus-4-0": _anthropic(15.00, 75.00),
    "claude-sonnet-4-6": _anthropic(3.00, 15.00),
    "claude-sonnet-4-5": _anthropic(3.00, 15.00),
    "claude-sonnet-4-0": _anthropic(3.00, 15.00),
    "claude-haiku-4-5": _anthropic(1.00, 5.00),
    "claude-3-7-sonnet": _anthropic(3.00, 15.00),
    "claude-3-5-haiku": _anthropic(0.80, 4.00),
}
"""List prices of well-known models, by model name without a date suffix."""

# Snapshot names carry a date: claude-sonnet-4-5-20250929, gpt-4.1-2025-04-14.
_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")
_ALIASES = {"claude-opus-4": "claude-opus-4-0", "claude-sonnet-4": "claude-sonnet-4-0"}


class PriceTable:
    """The built-in prices with the configured ones on top."""

    def __init__(self, configured: Mapping[str, ModelPrice] | None = None) -> None:
        self._prices = {**BUILTIN_PRICES, **(configured or {})}

    def price(self, model: str) -> ModelPrice | None:
        """The price of ``model`` (exact name first, then without its date suffix)."""
        if model in self._prices:
            return self._prices[model]
        base = _DATE_SUFFIX.sub("", model)
        return self._prices.get(base) or self._prices.get(_ALIASES.get(base, ""))

    def cost(
        self,
        model: str,
        *,
        input_tokens: int,
        output_tokens: int,
        cache_read_tokens: int = 0,
        cache_write_tokens: int = 0,
    ) -> float | None:
        """USD for one call; ``input_tokens`` are the uncached ones. ``None``: unknown model."""
        price = self.price(model)
        if price is None:
            return None
        read = price.cache_read_per_m_tok
        write = price.cache_write_per_m_tok
        micro_usd = (
            input_tokens * price.input_per_m_tok
            + output_tokens * price.output_per_m_tok
            + cache_read_tokens * (price.input_per_m_tok if read is None else read)
            + cache_write_tokens * (price.input_per_m_tok if write is None else write)
        )
        return micro_usd / 1_000_000
