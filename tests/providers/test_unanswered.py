"""A request whose connection ends before any answer — the API closed a kept connection
just as the request went on it — is sent again at once, with no retry notice; a second
such failure, or a stream cut after it began, is retried as any failure is (a notice,
then the backoff). Through each provider's real SDK, against the fake API."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tether.providers.base import Provider, RetryNotice

from . import test_anthropic, test_openai, test_responses
from .conftest import drain, text_of
from .fake_responses import responses_stream
from .fakes import Dropped, FakeApi, Sse, anthropic_stream, openai_stream

PROVIDERS: dict[str, tuple[Callable[[FakeApi], Provider], Callable[[str], list[str]]]] = {
    "openai": (test_openai.provider, openai_stream),
    "openai-responses": (test_responses.provider, responses_stream),
    "anthropic": (test_anthropic.provider, anthropic_stream),
}


@pytest.mark.parametrize("name", PROVIDERS)
async def test_a_request_dropped_unanswered_is_sent_again_at_once(fake: FakeApi, name: str) -> None:
    make, stream = PROVIDERS[name]
    fake.queue(Dropped(), Sse(stream("Hello.")))
    deltas = await drain(make(fake))
    assert len(fake.requests) == 2 and fake.connections == 2
    assert [d for d in deltas if isinstance(d, RetryNotice)] == []
    assert text_of(deltas) == "Hello."


@pytest.mark.parametrize("name", PROVIDERS)
async def test_only_the_first_is_quiet_and_a_cut_stream_still_says_so(
    fake: FakeApi, name: str
) -> None:
    make, stream = PROVIDERS[name]
    fake.queue(
        Dropped(),
        Dropped(),  # twice in a row is the API, not a stale connection: the usual notice
        Sse(stream("lost"), drop_after=1),  # began, then cut: the usual notice
        Sse(stream("Hello.")),
    )
    deltas = await drain(make(fake))
    assert len(fake.requests) == 4
    notices = [d for d in deltas if isinstance(d, RetryNotice)]
    assert [n.attempt for n in notices] == [2, 3]
    assert "Server disconnected without sending a response" in notices[0].reason
    assert text_of(deltas) == "Hello."
