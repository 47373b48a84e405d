"""Live calls to the real APIs: run only when a key is set (they cost a fraction of a cent).

``OPENAI_API_KEY`` / ``ANTHROPIC_API_KEY`` enable them; ``TETHER_LIVE_MODEL_OPENAI`` /
``TETHER_LIVE_MODEL_ANTHROPIC`` pick another model than the default. OpenAI is called through
both of its APIs (``openai``: the Responses API, its default; ``openai-chat``: Chat
Completions).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tether.config.layers import resolve
from tether.providers import API_KEY_VARIABLES, make_provider
from tether.providers.base import (
    AssistantMessage,
    Provider,
    ReasoningReady,
    ToolResultMessage,
    ToolSpec,
    UsageDelta,
    UserMessage,
)
from tether_protocol import TetherSettings

from .conftest import READ_FILE, calls_of, drain, request, text_of

PROVIDERS = ["openai", "openai-chat", "anthropic"]


def live(name: str, effort: str = "off") -> Provider:
    provider, _, api = name.partition("-")
    variable = API_KEY_VARIABLES[provider]
    if not os.environ.get(variable):
        pytest.skip(f"live {name} test: set {variable} to run it (it calls the real API)")
    model = os.environ.get(f"TETHER_LIVE_MODEL_{provider.upper()}")
    settings = TetherSettings(
        provider=provider,
        model=model,
        openai_api="chat" if api == "chat" else None,
        reasoning_effort=effort,  # type: ignore[arg-type]
    )
    return make_provider(provider, resolve(settings, os.environ), Path.cwd())


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


async def test_live_reasoning_goes_back_with_the_tool_result() -> None:
    """The Responses API takes back the encrypted reasoning of its own reply (store false)."""
    provider = live("openai", effort="low")
    prompt = UserMessage("Use the read_file tool to read README.md. Do not answer otherwise.")
    deltas = await drain(provider, request(prompt, tools=(READ_FILE,)))
    [call, *_] = calls_of(deltas)
    reasoning = tuple(d.block for d in deltas if isinstance(d, ReasoningReady))
    reply = AssistantMessage("", (call,), reasoning)
    result = ToolResultMessage(call.call_id, call.name, "# Demo\nIt says hello.", False)
    answer = await drain(provider, request(prompt, reply, result, tools=(READ_FILE,)))
    assert "hello" in text_of(answer).lower()
