"""Fixtures of the provider tests: a fake API per test, and a way to drain a provider."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

import pytest

from tether.errors import ProviderError
from tether.providers.base import (
    Message,
    ModelDelta,
    ModelRequest,
    Provider,
    TextDelta,
    ToolCall,
    ToolCallReady,
    ToolSpec,
    UsageDelta,
    UserMessage,
)
from tether.providers.retry import RetryPolicy

from .fakes import FakeApi

FAST_RETRIES = RetryPolicy(base_delay=0.01, max_delay=0.02)
"""Real backoff shape, test-sized waits."""

READ_FILE = ToolSpec(
    "read_file",
    "Read a file of the workspace.",
    {
        "type": "object",
        "properties": {"path": {"type": "string", "description": "relative path"}},
        "required": ["path"],
    },
)
LIST_FILES = ToolSpec(
    "list_files", "List files.", {"type": "object", "properties": {}, "required": []}
)


@pytest.fixture
def fake() -> Iterator[FakeApi]:
    """A fake model API on an ephemeral port, stopped (threads joined) after the test."""
    with FakeApi() as api:
        yield api
    leftover = [t.name for t in threading.enumerate() if "process_request" in t.name]
    assert not leftover and not api.serving, leftover


def request(
    *messages: Message, tools: Sequence[ToolSpec] = (READ_FILE, LIST_FILES)
) -> ModelRequest:
    """A model request with the system prompt "be brief" and the given conversation."""
    return ModelRequest("be brief", messages or (UserMessage("hi"),), tools)


async def drain(provider: Provider, model_request: ModelRequest | None = None) -> list[ModelDelta]:
    """Every delta of one model call."""
    return [delta async for delta in provider.stream(model_request or request())]


async def drain_until_failure(provider: Provider) -> tuple[list[ModelDelta], ProviderError]:
    """The deltas one model call streamed before it failed, and the ``ProviderError`` it
    failed with (the test fails if the call ends well)."""
    seen: list[ModelDelta] = []
    with pytest.raises(ProviderError) as caught:
        async for delta in provider.stream(request()):
            seen.append(delta)
    return seen, caught.value


def text_of(deltas: Sequence[ModelDelta]) -> str:
    """The streamed text, stitched."""
    return "".join(d.text for d in deltas if isinstance(d, TextDelta))


def calls_of(deltas: Sequence[ModelDelta]) -> list[ToolCall]:
    """The tool calls, in order."""
    return [d.call for d in deltas if isinstance(d, ToolCallReady)]


def usage_of(deltas: Sequence[ModelDelta]) -> list[UsageDelta]:
    """The usage reports (one per API request)."""
    return [d for d in deltas if isinstance(d, UsageDelta)]
