"""Live calls to the real APIs: run only when a key is set (they cost a fraction of a cent).

``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY`` enable them; ``TETHER_LIVE_MODEL_OPENAI`` /
``TETHER_LIVE_MODEL_ANTHROPIC`` pick another model than the default.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tether.config.layers import resolve
from tether.providers import API_KEY_VARIABLES, make_provider
from tether.providers.base import Provider, ToolSpec, UsageDelta, UserMessage
from tether_protocol import TetherSettings

from .conftest import READ_FILE, calls_of, drain, request, text_of

PROVIDERS = ["openai", "anthropic"]


def live(name: str) -> Provider:
    variable = API_KEY_VARIABLES[name]
    if not os.environ.get(variable):
        pytest.skip(f"live {name} test: set {variable} to run it (it calls the real API)")
    model = os.environ.get(f"TETHER_LIVE_MODEL_{name.upper()}")
    config = resolve(TetherSettings(provider=name, model=model), os.environ)
    return make_provider(name, config, Path.cwd())


@pytest.mark.parametrize("name", PROVIDERS)
async def test_live_text(name: str) -> None:
    deltas = await drain(
        live(name), request(UserMessage("Reply with exactly the word: pong"), tools=())
    )
    assert "pong" in text_of(deltas).lower()
    [usage] = [d for d in deltas if isinstance(d, UsageDelta)]
    assert usage.input_tokens > 0 and usage.output_tokens > 0


@pytest.mark.parametrize("name", PROVIDERS)
async def test_live_tool_call(name: str) -> None:
    tools: tuple[ToolSpec, ...] = (READ_FILE,)
    prompt = UserMessage("Use the read_file tool to read README.md. Do not answer otherwise.")
    calls = calls_of(await drain(live(name), request(prompt, tools=tools)))
    assert calls and calls[0].name == "read_file"
    assert calls[0].arguments_error is None and calls[0].arguments["path"].endswith("README.md")
