"""Cancelling a model call closes its stream (a cancelled run must stop within 1 s): the
connection is hung up on while the model is still sending. No clock is read: a loaded
machine makes each step slower, not the outcome different."""

from __future__ import annotations

import anyio
import pytest

from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import Provider, TextDelta
from tether.providers.openai import OpenAIProvider

from ..waiting import wait_until
from .conftest import FAST_RETRIES, request
from .fakes import FakeApi, Sse, anthropic_stream, openai_stream

WORDS = [f"word{i} " for i in range(400)]
"""20 s of stream at 0.05 s a word: longer than any wait below (a stream left open would end
normally, with no hang-up, only after that)."""


def slow_provider(fake: FakeApi, name: str) -> Provider:
    if name == "openai":
        fake.queue(Sse(openai_stream(*WORDS), delay=0.05))
        return OpenAIProvider(model="m", api_key="k", base_url=fake.url + "/v1", retry=FAST_RETRIES)
    fake.queue(Sse(anthropic_stream(*WORDS), delay=0.05))
    return AnthropicProvider(model="m", api_key="k", base_url=fake.url, retry=FAST_RETRIES)


@pytest.mark.parametrize("name", ["openai", "anthropic"])
async def test_cancelling_closes_the_stream(fake: FakeApi, name: str) -> None:
    provider = slow_provider(fake, name)
    stream = provider.stream(request())  # held: only the cancellation may close it
    seen: list[str] = []
    with anyio.CancelScope() as scope:
        async for delta in stream:
            if isinstance(delta, TextDelta):
                seen.append(delta.text)
                scope.cancel()  # mid-stream, the next read is cut (how agent/cancel lands)
    assert scope.cancelled_caught
    assert 1 <= len(seen) < len(WORDS)
    # The fake notices the closed connection on its next write (every 0.05 s). A stream the
    # cancellation left open is never hung up on: the fake goes on sending (WORDS lasts
    # longer than the wait), so this fails however loaded the machine.
    await wait_until(lambda: fake.hang_ups, "the fake API to see the connection closed")
    assert len(fake.requests) == 1  # cancellation is not a failure to retry


@pytest.mark.parametrize("name", ["openai", "anthropic"])
async def test_closing_the_stream_early_closes_the_connection(fake: FakeApi, name: str) -> None:
    stream = slow_provider(fake, name).stream(request())
    assert isinstance(await anext(stream), TextDelta)
    await stream.aclose()  # type: ignore[attr-defined]
    await wait_until(lambda: fake.hang_ups, "the fake API to see the connection closed")
