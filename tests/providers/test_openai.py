"""The OpenAI provider against a fake Chat Completions server, through the real SDK."""

from __future__ import annotations

import json

import pytest

from tether.errors import ProviderError
from tether.prompt.system import CONTINUE_PROMPT
from tether.providers.base import (
    AssistantMessage,
    RetryNotice,
    TextDelta,
    ToolCall,
    ToolResultMessage,
    UsageDelta,
    UserMessage,
)
from tether.providers.models import ModelTable
from tether.providers.openai import OpenAIProvider
from tether.providers.retry import OutputLimit
from tether_protocol.config import ModelPrice

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
from .fakes import DONE, FakeApi, Sse, Status, openai_delta, openai_stream, openai_usage


def provider(fake: FakeApi, **options: object) -> OpenAIProvider:
    settings: dict[str, object] = {
        "model": "gpt-5.4",
        "api_key": "test-key",
        "base_url": fake.url + "/v1",
        "retry": FAST_RETRIES,
        **options,
    }
    return OpenAIProvider(**settings)  # type: ignore[arg-type]


async def test_text_streams_piece_by_piece(fake: FakeApi) -> None:
    fake.queue(Sse(openai_stream("Hel", "lo", " world")))
    deltas = await drain(provider(fake))
    assert deltas == [
        TextDelta("Hel"),
        TextDelta("lo"),
        TextDelta(" world"),
        UsageDelta(100, 20, pytest.approx((100 * 2.5 + 20 * 15) / 1e6)),  # type: ignore[arg-type]
    ]
    assert len(fake.requests) == 1 and fake.requests[0].path == "/v1/chat/completions"


async def test_one_tool_call_with_arguments_split_mid_token(fake: FakeApi) -> None:
    pieces = ['{"pa', 'th": "sr', "c/ap", 'p.py"}']
    fake.queue(Sse(openai_stream("Reading.", calls=[("call_a", "read_file", pieces)])))
    deltas = await drain(provider(fake))
    assert text_of(deltas) == "Reading."
    assert calls_of(deltas) == [ToolCall("call_a", "read_file", {"path": "src/app.py"})]
    # Tool calls come after the text and before the usage.
    assert [type(d).__name__ for d in deltas] == ["TextDelta", "ToolCallReady", "UsageDelta"]


async def test_parallel_tool_calls_are_assembled_by_index(fake: FakeApi) -> None:
    def call(index: int, **fields: object) -> str:
        return openai_delta({"tool_calls": [{"index": index, **fields}]})

    frames = [
        openai_delta({"role": "assistant", "content": None}),
        call(0, id="call_1", type="function", function={"name": "read_file", "arguments": ""}),
        call(1, id="call_2", type="function", function={"name": "list_files", "arguments": ""}),
        call(0, function={"arguments": '{"path": '}),
        call(1, function={"arguments": "{}"}),
        call(0, function={"arguments": '"a.py"}'}),
        openai_delta({}, "tool_calls"),
        openai_usage(10, 5),
        DONE,
    ]
    fake.queue(Sse(frames))
    assert calls_of(await drain(provider(fake))) == [
        ToolCall("call_1", "read_file", {"path": "a.py"}),
        ToolCall("call_2", "list_files", {}),
    ]


async def test_usage_and_cost_count_cached_input_at_the_cache_price(fake: FakeApi) -> None:
    fake.queue(Sse(openai_stream("ok", usage=(1000, 200), cached=400)))
    [*_, usage] = await drain(provider(fake))
    assert usage == UsageDelta(1000, 200, pytest.approx((600 * 2.5 + 400 * 0.25 + 200 * 15) / 1e6))  # type: ignore[arg-type]


async def test_an_unknown_model_has_no_cost_unless_configured(fake: FakeApi) -> None:
    fake.queue(
        Sse(openai_stream("ok", usage=(1000, 100))), Sse(openai_stream("ok", usage=(1000, 100)))
    )
    [*_, unknown] = await drain(provider(fake, model="llama3.1:8b"))
    assert unknown == UsageDelta(1000, 100, None)
    models = ModelTable({"llama3.1:8b": ModelPrice(input_per_m_tok=1.0, output_per_m_tok=3.0)})
    [*_, priced] = await drain(provider(fake, model="llama3.1:8b", models=models))
    assert priced == UsageDelta(1000, 100, pytest.approx((1000 * 1.0 + 100 * 3.0) / 1e6))  # type: ignore[arg-type]


async def test_429_waits_as_long_as_retry_after_says(fake: FakeApi) -> None:
    limited = Status(
        429, {"error": {"message": "slow down", "type": "requests"}}, {"Retry-After": "0.3"}
    )
    fake.queue(limited, Sse(openai_stream("fine")))
    deltas = await drain(provider(fake))
    assert text_of(deltas) == "fine"
    # The delay chosen is Retry-After's (the policy's own backoff is 10-20 ms), and it was
    # waited; how much longer a loaded machine took is not the provider's doing.
    assert [d.delay_seconds for d in deltas if isinstance(d, RetryNotice)] == [0.3]
    first, second = fake.requests
    assert second.at - first.at >= 0.3


async def test_500_then_success_is_silent(fake: FakeApi) -> None:
    fake.queue(Status(500, {"error": {"message": "boom"}}), Sse(openai_stream("recovered")))
    assert text_of(await drain(provider(fake))) == "recovered"
    assert len(fake.requests) == 2


async def test_a_connection_dropped_before_any_output_is_retried(fake: FakeApi) -> None:
    fake.queue(Sse(openai_stream("lost"), drop_after=1), Sse(openai_stream("second try")))
    deltas = await drain(provider(fake))
    assert text_of(deltas) == "second try"
    assert len(fake.requests) == 2


async def test_a_stream_that_ends_without_a_finish_reason_is_retried(fake: FakeApi) -> None:
    fake.queue(Sse([openai_delta({"role": "assistant"}), DONE]), Sse(openai_stream("whole")))
    assert text_of(await drain(provider(fake))) == "whole"
    assert len(fake.requests) == 2


async def test_a_connection_dropped_after_output_fails_without_repeating_text(
    fake: FakeApi,
) -> None:
    fake.queue(Sse(openai_stream("Hello", " there"), drop_after=2), Sse(openai_stream("Hello")))
    seen, failure = await drain_until_failure(provider(fake))
    assert seen == [TextDelta("Hello")]
    assert "after the reply had started streaming" in str(failure)
    assert "connection to" in str(failure)
    assert len(fake.requests) == 1


async def test_four_failures_end_in_a_provider_error_with_the_reason(fake: FakeApi) -> None:
    fake.queue(*[Status(503, {"error": {"message": "upstream overloaded"}})] * 4)
    with pytest.raises(ProviderError) as caught:
        await drain(provider(fake))
    assert str(caught.value) == (
        f"{fake.url}/v1 answered 503: upstream overloaded (gave up after 4 attempts)"
    )
    assert len(fake.requests) == 4


async def test_an_auth_error_is_not_retried(fake: FakeApi) -> None:
    fake.queue(Status(401, {"error": {"message": "Incorrect API key provided"}}))
    with pytest.raises(ProviderError, match="answered 401: Incorrect API key provided$"):
        await drain(provider(fake))
    assert len(fake.requests) == 1


async def test_a_reply_cut_off_at_the_limit_is_raised_once_then_continued(fake: FakeApi) -> None:
    fake.queue(
        Sse(openai_stream("The answer", finish="length")),
        Sse(openai_stream(" is", finish="length")),
        Sse(openai_stream(" 42.")),
    )
    limited = provider(fake, limit=OutputLimit(100, 400), limit_parameter="max_tokens")
    deltas = await drain(limited, request(UserMessage("answer?")))
    assert text_of(deltas) == "The answer is 42."
    assert [r.body["max_tokens"] for r in fake.requests] == [100, 400, 400]
    assert all("max_completion_tokens" not in r.body for r in fake.requests)
    assert fake.requests[2].body["messages"][1:] == [
        {"role": "user", "content": "answer?"},
        {"role": "assistant", "content": "The answer is"},
        {"role": "user", "content": CONTINUE_PROMPT},
    ]
    assert sum(isinstance(d, UsageDelta) for d in deltas) == 3  # one per request


async def test_continuation_stops_after_three_requests(fake: FakeApi) -> None:
    fake.queue(*[Sse(openai_stream(f"part{i} ", finish="length")) for i in range(5)])
    deltas = await drain(provider(fake, limit=OutputLimit(10, 20)))
    assert text_of(deltas) == "part0 part1 part2 part3 "
    assert len(fake.requests) == 4
    assert [r.body["max_completion_tokens"] for r in fake.requests] == [10, 20, 20, 20]


async def test_a_tool_call_cut_off_at_the_limit_becomes_an_arguments_error(
    fake: FakeApi,
) -> None:
    cut = openai_stream(calls=[("call_1", "read_file", ['{"path": "sr'])], finish="length")
    fake.queue(Sse(cut), Sse(openai_stream("next step")))
    model = provider(fake, limit=OutputLimit(50, 500))
    [call] = calls_of(await drain(model))
    assert call.call_id == "call_1" and call.arguments == {}
    assert call.arguments_error == (
        "the reply was cut off at the output limit before they were complete"
    )
    assert len(fake.requests) == 1  # not continued: the model redoes the call next step
    await drain(model)
    assert fake.requests[1].body["max_completion_tokens"] == 500  # the raised limit stays


async def test_malformed_tool_arguments_become_an_arguments_error(fake: FakeApi) -> None:
    fake.queue(
        Sse(
            openai_stream(
                calls=[("c1", "read_file", ['{"path": src/app.py}']), ("c2", "list_files", ["[1]"])]
            )
        )
    )
    first, second = calls_of(await drain(provider(fake)))
    assert (first.name, first.arguments) == ("read_file", {})
    assert first.arguments_error == "Expecting value at character 9 of '{\"path\": src/app.py}'"
    assert second.arguments_error == "expected a JSON object, got '[1]'"


async def test_the_request_has_the_chat_completions_shape(fake: FakeApi) -> None:
    fake.queue(Sse(openai_stream("done")))
    history = request(
        UserMessage("read a.py"),
        AssistantMessage("Reading.", (ToolCall("c1", "read_file", {"path": "a.py"}),)),
        ToolResultMessage("c1", "read_file", "print(1)", False),
        AssistantMessage("", (ToolCall("c2", "read_file", {"path": "b.py"}),)),
        ToolResultMessage("c2", "read_file", "no such file: b.py", True),
        UserMessage("thanks"),
    )
    await drain(provider(fake), history)
    [sent] = fake.requests
    assert sent.headers["authorization"] == "Bearer test-key"
    body = sent.body
    assert body["model"] == "gpt-5.4" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert "max_tokens" not in body and "max_completion_tokens" not in body
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": s.name, "description": s.description, "parameters": s.parameters},
        }
        for s in (READ_FILE, LIST_FILES)
    ]

    def call(call_id: str, path: str) -> dict[str, object]:
        arguments = json.dumps({"path": path})
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": "read_file", "arguments": arguments},
        }

    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "read a.py"},
        {"role": "assistant", "content": "Reading.", "tool_calls": [call("c1", "a.py")]},
        {"role": "tool", "tool_call_id": "c1", "content": "print(1)"},
        {"role": "assistant", "content": None, "tool_calls": [call("c2", "b.py")]},
        {"role": "tool", "tool_call_id": "c2", "content": "Error: no such file: b.py"},
        {"role": "user", "content": "thanks"},
    ]


async def test_no_tools_means_no_tools_field(fake: FakeApi) -> None:
    fake.queue(Sse(openai_stream("hi")))
    await drain(provider(fake), request(UserMessage("hi"), tools=()))
    assert "tools" not in fake.requests[0].body


async def test_output_without_a_finish_reason_is_accepted(fake: FakeApi) -> None:
    # A few compatible servers never send finish_reason; their replies still count.
    frames = [openai_delta({"role": "assistant"}), openai_delta({"content": "hi"}), DONE]
    fake.queue(Sse(frames))
    deltas = await drain(provider(fake))
    assert text_of(deltas) == "hi" and len(fake.requests) == 1
    [*_, usage] = deltas
    assert isinstance(usage, UsageDelta) and usage.output_tokens == 1  # estimated: no usage


async def test_a_stream_closed_cleanly_mid_tool_call_is_retried(fake: FakeApi) -> None:
    # No finish_reason, no [DONE]: the arguments may be incomplete, and nothing was shown yet.
    cut = openai_stream(calls=[("call_1", "read_file", ['{"path"', ': "a.py"}'])])
    fake.queue(Sse(cut, end_after=3), Sse(openai_stream("whole")))
    deltas = await drain(provider(fake))
    assert text_of(deltas) == "whole" and calls_of(deltas) == []
    assert len(fake.requests) == 2


async def test_a_stream_closed_cleanly_after_text_is_an_error_saying_it_was_cut(
    fake: FakeApi,
) -> None:
    fake.queue(Sse(openai_stream("partial ", "answer"), end_after=2), Sse(openai_stream("again")))
    seen, failure = await drain_until_failure(provider(fake))
    assert "stream was cut" in str(failure)
    assert seen == [TextDelta("partial ")]
    assert "after the reply had started streaming" in str(failure)
    assert len(fake.requests) == 1  # not retried: "partial " was already shown


async def test_a_finish_reason_without_done_is_a_whole_reply(fake: FakeApi) -> None:
    # Everything up to the finish_reason (and usage) came; only the [DONE] line was lost.
    fake.queue(Sse(openai_stream("all of it"), end_after=4))
    deltas = await drain(provider(fake))
    assert text_of(deltas) == "all of it" and len(fake.requests) == 1


LONG_SESSION = [
    message
    for turn in range(20)
    for message in (
        UserMessage(f"read {turn}.py"),
        AssistantMessage("Reading.", (ToolCall(f"c{turn}", "read_file", {"path": f"{turn}.py"}),)),
        ToolResultMessage(f"c{turn}", "read_file", f"print({turn})", turn % 2 == 0),
    )
]


async def test_the_body_is_the_one_the_sdks_transform_makes(fake: FakeApi) -> None:
    """The conversation and the tools bypass the SDK's transform (``extra_body``); the body
    the API receives is the same JSON the transform makes of them."""
    from openai._utils._transform import async_maybe_transform
    from openai.types.chat import completion_create_params

    from tether.providers.openai import openai_messages, openai_tools

    fake.queue(Sse(openai_stream("done")))
    history = request(*LONG_SESSION, AssistantMessage("", ()), UserMessage("thanks"))
    await drain(provider(fake), history)
    params = {
        "model": "gpt-5.4",
        "messages": openai_messages(history),
        "tools": openai_tools(history),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    made = await async_maybe_transform(
        params, completion_create_params.CompletionCreateParamsStreaming
    )
    assert fake.requests[0].body == json.loads(json.dumps(made))


async def test_the_sdks_transform_does_not_walk_the_conversation(
    fake: FakeApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its cost grew with the session: every request walked every message (~90 % of a
    request's CPU 25 prompts into a session). Now a long conversation costs it what a
    short one does."""
    from openai._utils import _transform

    walked = [0]
    real = _transform._async_transform_recursive

    async def counting(*args: object, **kwargs: object) -> object:
        walked[0] += 1
        return await real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(_transform, "_async_transform_recursive", counting)
    steps = []
    for history in (request(UserMessage("hi")), request(*LONG_SESSION)):
        fake.queue(Sse(openai_stream("done")))
        walked[0] = 0
        await drain(provider(fake), history)
        steps.append(walked[0])
    assert steps[0] == steps[1] > 0, steps
