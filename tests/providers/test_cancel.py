"""Cancelling a model call closes its stream at once (a cancelled run must stop within 1 s)."""

from __future__ import annotations

import time

import anyio
import pytest

from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import Provider, TextDelta
from tether.providers.openai import OpenAIProvider

from ..waiting import wait_until
from .conftest import FAST_RETRIES, request
from .fakes import FakeApi, Sse, anthropic_stream, openai_stream

WORDS = [f"word{i} " for i in range(200)]


def slow_provider(fake: FakeApi, name: str) -> Provider:
    if name == "openai":
        fake.queue(Sse(openai_stream(*WORDS), delay=0.05))
        return OpenAIProvider(model="m", api_key="k", base_url=fake.url + "/v1", retry=FAST_RETRIES)
    fake.queue(Sse(anthropic_stream(*WORDS), delay=0.05))
    return AnthropicProvider(model="m", api_key="k", base_url=fake.url, retry=FAST_RETRIES)


@pytest.mark.parametrize("name", ["openai", "anthropic"])
async def test_cancelling_closes_the_stream(fake: FakeApi, name: str) -> None:
    provider = slow_provider(fake, name)
    seen: list[str] = []
    with anyio.move_on_after(0.5) as scope:
        async for delta in provider.stream(request()):
            if isinstance(delta, TextDelta):
                seen.append(delta.text)
    cancelled_at = time.monotonic()
    assert scope.cancelled_caught
    assert 1 <= len(seen) < len(WORDS)
    # the fake notices the closed connection on its next write (every 0.05 s); 1 s would do
    # on an idle machine, 5 s keeps a loaded CI green while a stream left open still fails
    await wait_until(lambda: fake.hang_ups, "the fake API to see the connection closed")
    assert fake.hang_ups[0] - cancelled_at < 5
    assert len(fake.requests) == 1  # cancellation is not a failure to retry


@pytest.mark.parametrize("name", ["openai", "anthropic"])
async def test_closing_the_stream_early_closes_the_connection(fake: FakeApi, name: str) -> None:
    stream = slow_provider(fake, name).stream(request())
    assert isinstance(await anext(stream), TextDelta)
    await stream.aclose()  # type: ignore[attr-defined]
    closed_at = time.monotonic()
    await wait_until(lambda: fake.hang_ups, "the fake API to see the connection closed")
    assert fake.hang_ups[0] - closed_at < 5  # generous, as above
