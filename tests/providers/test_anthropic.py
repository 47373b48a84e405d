"""The Anthropic provider against a fake Messages server, through the real SDK."""

from __future__ import annotations

import pytest

from tether.errors import ProviderError
from tether.prompt.system import CONTINUE_PROMPT
from tether.providers.anthropic import OUTPUT_LIMIT, AnthropicProvider
from tether.providers.base import (
    AssistantMessage,
    RetryNotice,
    TextDelta,
    ToolCall,
    ToolResultMessage,
    UsageDelta,
    UserMessage,
)
from tether.providers.retry import OutputLimit

from .conftest import (
    FAST_RETRIES,
    LIST_FILES,
    READ_FILE,
    calls_of,
    drain,
    drain_until_failure,
    request,
    text_of,
)
from .fakes import FakeApi, Sse, Status, anthropic_error_event, anthropic_stream

CACHED = {"type": "ephemeral"}


def provider(fake: FakeApi, **options: object) -> AnthropicProvider:
    settings: dict[str, object] = {
        "model": "claude-sonnet-5-5",
        "api_key": "test-key",
        "base_url": fake.url,
        "retry": FAST_RETRIES,
        **options,
    }
    return AnthropicProvider(**settings)  # type: ignore[arg-type]


def sonnet_cost(input_: int, output: int, read: int = 0, write: int = 0) -> object:
    return pytest.approx((input_ * 2 + output * 10 + read * 0.2 + write * 2.5) / 1e6)


async def test_text_streams_piece_by_piece(fake: FakeApi) -> None:
    fake.queue(Sse(anthropic_stream("Hel", "lo", " world")))
    deltas = await drain(provider(fake))
    assert deltas == [
        TextDelta("Hel"),
        TextDelta("lo"),
        TextDelta(" world"),
        UsageDelta(100, 20, sonnet_cost(100, 20)),  # type: ignore[arg-type]
    ]
    assert fake.requests[0].path == "/v1/messages"


async def test_one_tool_call_with_input_json_split_mid_token(fake: FakeApi) -> None:
    pieces = ['{"pa', 'th": "sr', "c/ap", 'p.py"}']
    fake.queue(Sse(anthropic_stream("Reading.", calls=[("toolu_1", "read_file", pieces)])))
    deltas = await drain(provider(fake))
    assert text_of(deltas) == "Reading."
    assert calls_of(deltas) == [ToolCall("toolu_1", "read_file", {"path": "src/app.py"})]
    assert [type(d).__name__ for d in deltas] == ["TextDelta", "ToolCallReady", "UsageDelta"]


async def test_parallel_tool_use_blocks(fake: FakeApi) -> None:
    calls = [("toolu_1", "read_file", ['{"path": "a.py"}']), ("toolu_2", "list_files", [])]
    fake.queue(Sse(anthropic_stream(calls=calls)))
    assert calls_of(await drain(provider(fake))) == [
        ToolCall("toolu_1", "read_file", {"path": "a.py"}),
        ToolCall("toolu_2", "list_files", {}),
    ]


async def test_usage_counts_cache_reads_and_writes(fake: FakeApi) -> None:
    fake.queue(Sse(anthropic_stream("ok", usage=(50, 20), cache_read=1000, cache_write=200)))
    [*_, usage] = await drain(provider(fake))
    assert usage == UsageDelta(1250, 20, sonnet_cost(50, 20, read=1000, write=200))  # type: ignore[arg-type]


async def test_429_waits_as_long_as_retry_after_says(fake: FakeApi) -> None:
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    fake.queue(Status(429, body, {"retry-after": "0.3"}), Sse(anthropic_stream("fine")))
    deltas = await drain(provider(fake))
    assert text_of(deltas) == "fine"
    # The delay chosen is Retry-After's (the policy's own backoff is 10-20 ms), and it was
    # waited; how much longer a loaded machine took is not the provider's doing.
    assert [d.delay_seconds for d in deltas if isinstance(d, RetryNotice)] == [0.3]
    first, second = fake.requests
    assert second.at - first.at >= 0.3


async def test_529_overloaded_then_success(fake: FakeApi) -> None:
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    fake.queue(Status(529, body), Sse(anthropic_stream("recovered")))
    assert text_of(await drain(provider(fake))) == "recovered"
    assert len(fake.requests) == 2


async def test_an_overloaded_error_event_before_output_is_retried(fake: FakeApi) -> None:
    start = anthropic_stream("x")[:2]  # message_start, ping
    fake.queue(
        Sse([*start, anthropic_error_event("overloaded_error", "Overloaded")]),
        Sse(anthropic_stream("recovered")),
    )
    assert text_of(await drain(provider(fake))) == "recovered"
    assert len(fake.requests) == 2


async def test_a_connection_dropped_before_any_output_is_retried(fake: FakeApi) -> None:
    fake.queue(Sse(anthropic_stream("lost"), drop_after=3), Sse(anthropic_stream("second try")))
    assert text_of(await drain(provider(fake))) == "second try"
    assert len(fake.requests) == 2


async def test_a_tool_call_dropped_mid_arguments_is_retried(fake: FakeApi) -> None:
    # Tool calls are held back until the message is complete, so nothing was shown yet.
    cut = anthropic_stream(calls=[("toolu_1", "read_file", ['{"path"', ': "a.py"}'])])
    fake.queue(Sse(cut, drop_after=4), Sse(anthropic_stream("whole")))
    deltas = await drain(provider(fake))
    assert text_of(deltas) == "whole" and calls_of(deltas) == []


async def test_a_connection_dropped_after_output_fails_without_repeating_text(
    fake: FakeApi,
) -> None:
    fake.queue(Sse(anthropic_stream("Hello", " there"), drop_after=4))
    seen, failure = await drain_until_failure(provider(fake))
    assert seen == [TextDelta("Hello")]
    assert "after the reply had started streaming" in str(failure)
    assert len(fake.requests) == 1


async def test_four_failures_end_in_a_provider_error_with_the_reason(fake: FakeApi) -> None:
    body = {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}}
    fake.queue(*[Status(500, body)] * 4)
    with pytest.raises(ProviderError) as caught:
        await drain(provider(fake))
    assert str(caught.value) == (
        f"{fake.url} answered 500: Internal server error (gave up after 4 attempts)"
    )
    assert len(fake.requests) == 4


async def test_a_bad_request_is_not_retried(fake: FakeApi) -> None:
    body = {"type": "error", "error": {"type": "invalid_request_error", "message": "bad model"}}
    fake.queue(Status(400, body))
    with pytest.raises(ProviderError, match="answered 400: bad model$"):
        await drain(provider(fake))
    assert len(fake.requests) == 1


async def test_max_tokens_raises_the_limit_once_then_continues(fake: FakeApi) -> None:
    fake.queue(
        Sse(anthropic_stream("The answer", stop="max_tokens")),
        Sse(anthropic_stream(" is 42.")),
    )
    deltas = await drain(provider(fake, limit=OutputLimit(100, 400)), request(UserMessage("q?")))
    assert text_of(deltas) == "The answer is 42."
    assert [r.body["max_tokens"] for r in fake.requests] == [100, 400]
    assert fake.requests[1].body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "q?"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "The answer"}]},
        {
            "role": "user",
            "content": [{"type": "text", "text": CONTINUE_PROMPT, "cache_control": CACHED}],
        },
    ]


async def test_the_default_output_limit(fake: FakeApi) -> None:
    fake.queue(Sse(anthropic_stream("ok")))
    await drain(provider(fake))
    assert fake.requests[0].body["max_tokens"] == OUTPUT_LIMIT[0] == 16_384


async def test_malformed_input_json_becomes_an_arguments_error(fake: FakeApi) -> None:
    fake.queue(Sse(anthropic_stream(calls=[("toolu_1", "read_file", ['{"path": "a.py"'])])))
    [call] = calls_of(await drain(provider(fake)))
    assert call.arguments == {}
    assert call.arguments_error == (
        "Expecting ',' delimiter at character 15 of '{\"path\": \"a.py\"'"
    )


async def test_the_request_has_the_messages_shape_with_cache_breakpoints(fake: FakeApi) -> None:
    fake.queue(Sse(anthropic_stream("done")))
    history = request(
        UserMessage("read a.py"),
        AssistantMessage("Reading.", (ToolCall("t1", "read_file", {"path": "a.py"}),)),
        ToolResultMessage("t1", "read_file", "print(1)", False),
        AssistantMessage(
            "",
            (
                ToolCall("t2", "read_file", {"path": "b.py"}),
                ToolCall("t3", "list_files", {}),
            ),
        ),
        ToolResultMessage("t2", "read_file", "no such file: b.py", True),
        ToolResultMessage("t3", "list_files", "a.py", False),
        UserMessage("and now?"),
    )
    await drain(provider(fake), history)
    [sent] = fake.requests
    assert sent.headers["authorization"] == "Bearer test-key"  # how SDK 2.x sends a key
    assert "anthropic-version" in sent.headers
    body = sent.body
    assert body["model"] == "claude-sonnet-5-5" and body["stream"] is True
    assert body["system"] == [{"type": "text", "text": "be brief", "cache_control": CACHED}]
    assert body["tools"] == [
        {
            "name": "read_file",
            "description": READ_FILE.description,
            "input_schema": READ_FILE.parameters,
        },
        {
            "name": "list_files",
            "description": LIST_FILES.description,
            "input_schema": LIST_FILES.parameters,
            "cache_control": CACHED,
        },
    ]

    def use(call_id: str, name: str, arguments: dict[str, str]) -> dict[str, object]:
        return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}

    def result(call_id: str, content: str, is_error: bool) -> dict[str, object]:
        return {
            "type": "tool_result",
            "tool_use_id": call_id,
            "content": content,
            "is_error": is_error,
        }

    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "read a.py"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading."},
                use("t1", "read_file", {"path": "a.py"}),
            ],
        },
        {"role": "user", "content": [result("t1", "print(1)", False)]},
        {
            "role": "assistant",
            "content": [use("t2", "read_file", {"path": "b.py"}), use("t3", "list_files", {})],
        },
        {
            "role": "user",  # results first, then the text, in one turn
            "content": [
                result("t2", "no such file: b.py", True),
                result("t3", "a.py", False),
                {"type": "text", "text": "and now?", "cache_control": CACHED},
            ],
        },
    ]


async def test_a_stream_closed_cleanly_before_any_text_is_retried(fake: FakeApi) -> None:
    fake.queue(Sse(anthropic_stream("lost"), end_after=2), Sse(anthropic_stream("second try")))
    assert text_of(await drain(provider(fake))) == "second try"
    assert len(fake.requests) == 2


async def test_a_stream_closed_cleanly_after_text_is_an_error_saying_it_was_cut(
    fake: FakeApi,
) -> None:
    # No message_delta, no message_stop: the server closed the body after "partial ".
    fake.queue(Sse(anthropic_stream("partial ", "answer"), end_after=4))
    seen, failure = await drain_until_failure(provider(fake))
    assert "stream was cut" in str(failure)
    assert seen == [TextDelta("partial ")]
    assert "after the reply had started streaming" in str(failure)
    assert len(fake.requests) == 1
