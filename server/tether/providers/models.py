"""What Tether knows of a model: how much context one call may hold, and what it costs.

One table, by model name: the context window (in tokens) and the list price (USD per
million tokens; OpenAI and Anthropic, standard tier, short context). The ``prices``
setting adds models and overrides prices; a model the table does not know has no known
cost, and its window comes from ``contextWindowTokens`` or a conservative default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from tether_protocol.config import ModelPrice

LOCAL_DEFAULT_WINDOW = 8_192
"""An unknown model behind ``baseUrl`` (Ollama, vLLM, llama.cpp, a gateway): local
servers often run small contexts, and Ollama cuts a longer prompt silently."""

API_DEFAULT_WINDOW = 128_000
"""An unknown model on OpenAI's or Anthropic's own API: every current model there
holds at least this (the older, smaller ones are in the table)."""


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """One known model: the tokens one call may hold, and its price."""

    window: int
    """The context window — or, for a model whose price rises past some prompt size, that
    size: the listed price holds up to it, and staying below it keeps the cost right."""
    price: ModelPrice


def _openai(window: int, input_: float, cached: float | None, output: float) -> ModelInfo:
    price = ModelPrice(input_per_m_tok=input_, output_per_m_tok=output, cache_read_per_m_tok=cached)
    return ModelInfo(window, price)


def _anthropic(window: int, input_: float, output: float) -> ModelInfo:
    # Anthropic's published multipliers: cache hits 0.1x input, 5-minute cache writes 1.25x.
    price = ModelPrice(
        input_per_m_tok=input_,
        output_per_m_tok=output,
        cache_read_per_m_tok=round(input_ * 0.1, 6),
        cache_write_per_m_tok=round(input_ * 1.25, 6),
    )
    return ModelInfo(window, price)


SHORT_CONTEXT = 272_000
"""OpenAI's 1M-window models bill a prompt past 272K input tokens at a higher rate; the
GPT-5 models before them take at most 272K input tokens."""
CLAUDE_WINDOW = 200_000
"""Claude's standard window (newer models take up to 1M; Tether stays at 200K there)."""

KNOWN_MODELS: Mapping[str, ModelInfo] = {
    # OpenAI: window, input, cached input, output
    "gpt-6.2-sol": _openai(SHORT_CONTEXT, 2.00, 0.10, 10.00),
    "gpt-6.1-sol": _openai(SHORT_CONTEXT, 2.00, 0.10, 10.00),
    "gpt-6-sol": _openai(SHORT_CONTEXT, 2.00, 0.20, 10.00),
    "gpt-6-luna": _openai(SHORT_CONTEXT, 0.10, 0.01, 0.50),
    "gpt-5.5": _openai(SHORT_CONTEXT, 5.00, 0.50, 30.00),
    "gpt-5.4": _openai(SHORT_CONTEXT, 2.50, 0.25, 15.00),
    "gpt-5.4-mini": _openai(SHORT_CONTEXT, 0.75, 0.075, 4.50),
    "gpt-5.4-nano": _openai(SHORT_CONTEXT, 0.20, 0.02, 1.25),
    "gpt-5.2": _openai(SHORT_CONTEXT, 1.75, 0.175, 14.00),
    "gpt-5.1": _openai(SHORT_CONTEXT, 1.25, 0.125, 10.00),
    "gpt-5": _openai(SHORT_CONTEXT, 1.25, 0.125, 10.00),
    "gpt-5-mini": _openai(SHORT_CONTEXT, 0.25, 0.025, 2.00),
    "gpt-5-nano": _openai(SHORT_CONTEXT, 0.05, 0.005, 0.40),
    "gpt-4.1": _openai(1_047_576, 2.00, 0.50, 8.00),
    "gpt-4.1-mini": _openai(1_047_576, 0.40, 0.10, 1.60),
    "gpt-4.1-nano": _openai(1_047_576, 0.10, 0.025, 0.40),
    "gpt-4o": _openai(128_000, 2.50, 1.25, 10.00),
    "gpt-4o-mini": _openai(128_000, 0.15, 0.075, 0.60),
    "o3": _openai(200_000, 2.00, 0.50, 8.00),
    "o4-mini": _openai(200_000, 1.10, 0.275, 4.40),
    "gpt-4-turbo": _openai(128_000, 10.00, None, 30.00),
    "gpt-4": _openai(8_192, 30.00, None, 60.00),
    "gpt-3.5-turbo": _openai(16_385, 0.50, None, 1.50),
    # Anthropic: window, input, output
    "claude-opus-5-5": _anthropic(CLAUDE_WINDOW, 4.00, 20.00),
    "claude-sonnet-5-5": _anthropic(CLAUDE_WINDOW, 2.00, 10.00),
    "claude-opus-5": _anthropic(CLAUDE_WINDOW, 5.00, 25.00),
    "claude-sonnet-5": _anthropic(CLAUDE_WINDOW, 2.00, 10.00),
    "claude-opus-4-6": _anthropic(CLAUDE_WINDOW, 5.00, 25.00),
    "claude-opus-4-5": _anthropic(CLAUDE_WINDOW, 5.00, 25.00),
    "claude-opus-4-1": _anthropic(CLAUDE_WINDOW, 15.00, 75.00),
    "claude-opus-4-0": _anthropic(CLAUDE_WINDOW, 15.00, 75.00),
    "claude-sonnet-4-6": _anthropic(CLAUDE_WINDOW, 3.00, 15.00),
    "claude-sonnet-4-5": _anthropic(CLAUDE_WINDOW, 3.00, 15.00),
    "claude-sonnet-4-0": _anthropic(CLAUDE_WINDOW, 3.00, 15.00),
    "claude-haiku-4-5": _anthropic(CLAUDE_WINDOW, 1.00, 5.00),
    "claude-3-7-sonnet": _anthropic(CLAUDE_WINDOW, 3.00, 15.00),
    "claude-3-5-haiku": _anthropic(CLAUDE_WINDOW, 0.80, 4.00),
}
"""Well-known models by name without a date suffix."""


def known_models(provider: str | None) -> list[str]:
    """The models of the table ``provider`` serves (none for another provider), in its order."""
    if provider == "anthropic":
        return [name for name in KNOWN_MODELS if name.startswith("claude-")]
    if provider == "openai":
        return [name for name in KNOWN_MODELS if not name.startswith("claude-")]
    return []


# Snapshot names carry a date: claude-sonnet-4-5-20250929, gpt-4.1-2025-04-14.
_DATE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")
_ALIASES = {"claude-opus-4": "claude-opus-4-0", "claude-sonnet-4": "claude-sonnet-4-0"}


def _find(table: Mapping[str, ModelPrice] | Mapping[str, ModelInfo], model: str) -> str | None:
    """The key ``model`` has in ``table``: exact name first, then without its date suffix."""
    if model in table:
        return model
    base = _DATE_SUFFIX.sub("", model)
    for name in (base, _ALIASES.get(base, "")):
        if name in table:
            return name
    return None


class ModelTable:
    """The known models, with the configured prices on top."""

    def __init__(self, configured_prices: Mapping[str, ModelPrice] | None = None) -> None:
        self._prices = dict(configured_prices or {})

    def info(self, model: str) -> ModelInfo | None:
        """What the built-in table says of ``model`` (None: not a model it knows)."""
        key = _find(KNOWN_MODELS, model)
        return None if key is None else KNOWN_MODELS[key]

    def price(self, model: str) -> ModelPrice | None:
        """The price of ``model``: configured first, then the built-in one."""
        key = _find(self._prices, model)
        if key is not None:
            return self._prices[key]
        info = self.info(model)
        return None if info is None else info.price

    def window(self, model: str, *, configured: int | None = None, local: bool = False) -> int:
        """Tokens one call of ``model`` may hold: the table's window, else the configured
        one (``contextWindowTokens``), else a default (smaller behind a ``baseUrl``)."""
        info = self.info(model)
        if info is not None:
            return info.window
        if configured is not None:
            return configured
        return LOCAL_DEFAULT_WINDOW if local else API_DEFAULT_WINDOW

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
