"""The model table: lookups, windows, cost arithmetic, and prices from configuration."""

from __future__ import annotations

import pytest

from tether.config.layers import ConfigError, merge, parse_settings, resolve
from tether.providers.models import KNOWN_MODELS, ModelTable
from tether_protocol import TetherSettings
from tether_protocol.config import ModelPrice


def test_lookup_by_exact_name_then_without_the_date_suffix() -> None:
    table = ModelTable()
    assert table.price("claude-sonnet-4-5") == KNOWN_MODELS["claude-sonnet-4-5"].price
    assert table.price("claude-sonnet-4-5-20250929") == KNOWN_MODELS["claude-sonnet-4-5"].price
    assert table.price("gpt-4.1-2025-04-14") == KNOWN_MODELS["gpt-4.1"].price
    assert table.price("claude-sonnet-4") == KNOWN_MODELS["claude-sonnet-4-0"].price
    assert table.price("my-local-model") is None


def test_anthropic_cache_prices_follow_the_published_multipliers() -> None:
    price = KNOWN_MODELS["claude-sonnet-5-5"].price
    assert (price.input_per_m_tok, price.output_per_m_tok) == (2.0, 10.0)
    assert (price.cache_read_per_m_tok, price.cache_write_per_m_tok) == (0.2, 2.5)


def test_cost_arithmetic() -> None:
    table = ModelTable()
    cost = table.cost(
        "claude-haiku-4-5",
        input_tokens=1_000_000,
        output_tokens=100_000,
        cache_read_tokens=2_000_000,
        cache_write_tokens=400_000,
    )
    assert cost == pytest.approx(1.0 + 0.5 + 0.2 + 0.5)
    assert table.cost("unknown", input_tokens=10, output_tokens=10) is None


def test_cache_prices_default_to_the_input_price() -> None:
    table = ModelTable({"m": ModelPrice(input_per_m_tok=4.0, output_per_m_tok=8.0)})
    cost = table.cost("m", input_tokens=0, output_tokens=0, cache_read_tokens=10**6)
    assert cost == pytest.approx(4.0)


def test_configured_prices_add_to_and_override_the_table() -> None:
    settings = parse_settings(
        {
            "prices": {
                "llama3.1:8b": {"inputPerMTok": 0, "outputPerMTok": 0},
                "gpt-5.4": {"inputPerMTok": 1, "outputPerMTok": 2, "cacheReadPerMTok": 0.5},
            }
        },
        "initializationOptions",
    )
    config = resolve(merge(TetherSettings(), settings), {"XDG_STATE_HOME": "/x"})
    table = ModelTable(config.prices)
    assert table.cost("llama3.1:8b", input_tokens=10**6, output_tokens=10**6) == 0.0
    assert table.price("gpt-5.4") == ModelPrice(
        input_per_m_tok=1.0, output_per_m_tok=2.0, cache_read_per_m_tok=0.5
    )
    assert table.price("gpt-5.4-mini") == KNOWN_MODELS["gpt-5.4-mini"].price


@pytest.mark.parametrize(
    ("prices", "where"),
    [
        ({"m": {"inputPerMTok": 1}}, "prices.m.outputPerMTok"),
        ({"m": {"inputPerMTok": -1, "outputPerMTok": 1}}, "prices.m.inputPerMTok"),
        ({"m": {"inputPerMTok": "1", "outputPerMTok": 1}}, "prices.m.inputPerMTok"),
        ({"m": {"input": 1, "outputPerMTok": 1}}, "prices.m."),
    ],
)
def test_bad_prices_name_the_field(prices: object, where: str) -> None:
    with pytest.raises(ConfigError, match=rf"^init\.{where}"):
        parse_settings({"prices": prices}, "init")


def test_windows_come_from_the_same_table_as_prices() -> None:
    table = ModelTable({"llama3.1:8b": ModelPrice(input_per_m_tok=0, output_per_m_tok=0)})
    assert table.window("claude-haiku-4-5-20251001") == KNOWN_MODELS["claude-haiku-4-5"].window
    assert table.window("gpt-3.5-turbo") == 16_385
    # a configured price does not make a model known: its window is configured or a default
    assert table.window("llama3.1:8b", local=True) == 8_192
    assert table.window("llama3.1:8b", configured=65_536, local=True) == 65_536
    assert table.window("gpt-4o-mini", configured=65_536) == 128_000
