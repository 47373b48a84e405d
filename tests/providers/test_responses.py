"""The OpenAI Responses API through the real SDK against a fake server speaking its SSE
events: the request (reasoning effort, ``store: false``, encrypted reasoning included),
text, function calls, reasoning summaries as thinking, reasoning items kept and sent back,
usage with reasoning tokens, retries, cut streams, the output limit, a refused item."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence

import pytest

from tether.errors import ProviderError
from tether.providers.base import (
    AssistantMessage,
    ModelDelta,
    Reasoning,
    ReasoningReady,
    RetryNotice,
    TextDelta,
    ThinkingDelta,
    ToolCall,
    ToolResultMessage,
    UsageDelta,
    UserMessage,
)
from tether.providers.openai_responses import OpenAIResponsesProvider
from tether.providers.retry import OutputLimit

from .conftest import FAST_RETRIES, calls_of, drain, drain_until_failure, request, text_of
from .fake_responses import responses_failed, responses_stream
from .fakes import FakeApi, Sse, Status

READ_A = [("call_1", "read_file", ['{"pa', 'th": "a.py"}'])]
ENCRYPTED = "gAAAAABo-enc+1/=="


def provider(fake: FakeApi, effort: str = "medium", **options: object) -> OpenAIResponsesProvider:
    settings: dict[str, object] = {
        "model": "gpt-5.4",
        "api_key": "test-key",
        "base_url": fake.url + "/v1",
        "retry": FAST_RETRIES,
        "reasoning_effort": effort,
        **options,
    }
    return OpenAIResponsesProvider(**settings)  # type: ignore[arg-type]


def thinking_of(deltas: Sequence[ModelDelta]) -> str:
    return "".join(d.text for d in deltas if isinstance(d, ThinkingDelta))


def reasoning_of(deltas: Sequence[ModelDelta]) -> list[Reasoning]:
    return [d.block for d in deltas if isinstance(d, ReasoningReady)]


def kept(item_id: str = "rs_resp_1", summary: str = "", data: str = ENCRYPTED) -> Reasoning:
    return Reasoning("openai-responses", "reasoning", summary, item_id, data)


async def test_the_request_is_the_responses_api_with_effort_and_encrypted_reasoning(
    fake: FakeApi,
) -> None:
    fake.queue(Sse(responses_stream("hi")))
    await drain(provider(fake, "high", limit=OutputLimit(8_192, 16_384)))
    [sent] = fake.requests
    assert sent.path == "/v1/responses"
    body = sent.body
    assert body["model"] == "gpt-5.4" and body["stream"] is True
    assert body["store"] is False
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"effort": "high", "summary": "auto"}
    assert body["instructions"] == "be brief"
    assert body["input"] == [{"role": "user", "content": "hi"}]
    assert body["max_output_tokens"] == 8_192
    assert body["tools"][0] == {
        "type": "function",
        "name": "read_file",
        "description": "Read a file of the workspace.",
        "parameters": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "relative path"}},
            "required": ["path"],
        },
        "strict": False,
    }


async def test_effort_off_leaves_the_models_own_effort(fake: FakeApi) -> None:
    fake.queue(Sse(responses_stream("hi")))
    await drain(provider(fake, "off"))
    body = fake.requests[0].body
    assert body["reasoning"] == {"summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]


async def test_a_model_that_cannot_reason_gets_neither_with_one_note(
    fake: FakeApi, caplog: pytest.LogCaptureFixture
) -> None:
    fake.queue(Sse(responses_stream("hi")), Sse(responses_stream("again")))
    with caplog.at_level(logging.INFO, logger="tether.providers.openai_responses"):
        await drain(provider(fake, "high", model="gpt-4.1"))
        await drain(provider(fake, "high", model="gpt-4.1"))
    assert all("reasoning" not in r.body and "include" not in r.body for r in fake.requests)
    notes = [r.getMessage() for r in caplog.records if "reasoningEffort" in r.getMessage()]
    assert notes == ["reasoningEffort high ignored: gpt-4.1 does not reason"]


async def test_text_calls_summary_and_reasoning_stream_in_their_places(fake: FakeApi) -> None:
    fake.queue(
        Sse(
            responses_stream(
                "Reading ",
                "a.py.",
                calls=READ_A,
                summary=[["Look at ", "a.py first."], ["Then answer."]],
                encrypted=ENCRYPTED,
            )
        )
    )
    deltas = await drain(provider(fake))
    assert [d.text for d in deltas if isinstance(d, ThinkingDelta)] == [
        "Look at ",
        "a.py first.",
        "\n\n",
        "Then answer.",
    ]
    assert [d.text for d in deltas if isinstance(d, TextDelta)] == ["Reading ", "a.py."]
    assert calls_of(deltas) == [ToolCall("call_1", "read_file", {"path": "a.py"})]
    assert reasoning_of(deltas) == [kept(summary="Look at a.py first.\n\nThen answer.")]
    kinds = [type(d).__name__ for d in deltas]
    assert kinds.index("ReasoningReady") < kinds.index("ToolCallReady") < kinds.index("UsageDelta")


async def test_usage_counts_reasoning_tokens_as_output_and_cached_input(fake: FakeApi) -> None:
    fake.queue(
        Sse(
            responses_stream(
                "ok", usage=(1_000, 300), reasoning_tokens=250, cached=600, encrypted="e"
            )
        )
    )
    deltas = await drain(provider(fake))
    [usage] = [d for d in deltas if isinstance(d, UsageDelta)]
    # gpt-5.4: $2.50 in, $0.25 cached in, $15 out per million; reasoning is output.
    assert (usage.input_tokens, usage.output_tokens) == (1_000, 300)
    assert usage.cost_usd == pytest.approx((400 * 2.5 + 600 * 0.25 + 300 * 15) / 1e6)


async def test_kept_reasoning_goes_back_before_its_call_and_others_do_not(
    fake: FakeApi,
) -> None:
    fake.queue(Sse(responses_stream("It prints 1.")))
    call = ToolCall("call_1", "read_file", {"path": "a.py"})
    reasoning = (
        kept("rs_9", "Read a.py."),
        Reasoning("anthropic", "thinking", "another model's thinking", "sig"),
        Reasoning("openai-chat", "reasoning_content", "a local model's reasoning"),
    )
    # A fresh provider (a new run, a new process): the items come from the message alone.
    await drain(
        provider(fake),
        request(
            UserMessage("what does a.py do?"),
            AssistantMessage("Reading.", (call,), reasoning),
            ToolResultMessage(call.call_id, "read_file", "print(1)", False),
            UserMessage("and?"),
            AssistantMessage("a failure", (), ()),
        ),
    )
    assert fake.requests[0].body["input"] == [
        {"role": "user", "content": "what does a.py do?"},
        {
            "type": "reasoning",
            "id": "rs_9",
            "summary": [{"type": "summary_text", "text": "Read a.py."}],
            "encrypted_content": ENCRYPTED,
        },
        {"role": "assistant", "content": "Reading."},
        {
            "type": "function_call",
            "call_id": "call_1",
            "name": "read_file",
            "arguments": '{"path": "a.py"}',
        },
        {"type": "function_call_output", "call_id": "call_1", "output": "print(1)"},
        {"role": "user", "content": "and?"},
        {"role": "assistant", "content": "a failure"},
    ]


async def test_a_tool_error_says_so_in_its_output(fake: FakeApi) -> None:
    fake.queue(Sse(responses_stream("ok")))
    call = ToolCall("call_1", "read_file", {"path": "nope"})
    await drain(
        provider(fake),
        request(
            UserMessage("q"),
            AssistantMessage("", (call,)),
            ToolResultMessage("call_1", "read_file", "no such file", True),
        ),
    )
    items = fake.requests[0].body["input"]
    assert items[1]["type"] == "function_call"  # no empty assistant message before it
    assert items[2] == {
        "type": "function_call_output",
        "call_id": "call_1",
        "output": "Error: no such file",
    }


async def test_a_stream_cut_in_the_middle_of_reasoning_is_retried(fake: FakeApi) -> None:
    cut = responses_stream("lost", summary=[["First ", "try"]], encrypted="e1", calls=READ_A)
    # created, item added, summary part added, one summary delta: then the connection drops.
    fake.queue(
        Sse(cut, drop_after=4),
        Sse(responses_stream("Done.", summary=[["Second ", "try"]], encrypted="e2")),
    )
    deltas = await drain(provider(fake))
    assert len(fake.requests) == 2
    assert [type(d) for d in deltas[:2]] == [ThinkingDelta, RetryNotice]
    assert thinking_of(deltas) == "First Second try"
    assert text_of(deltas) == "Done." and calls_of(deltas) == []
    assert reasoning_of(deltas) == [kept(summary="Second try", data="e2")]


async def test_a_stream_closed_cleanly_before_completed_is_retried(fake: FakeApi) -> None:
    frames = responses_stream("Hello", calls=READ_A)
    fake.queue(Sse(frames, end_after=2), Sse(responses_stream("Hello again.")))
    deltas = await drain(provider(fake))
    assert len(fake.requests) == 2 and text_of(deltas) == "Hello again."


async def test_a_stream_cut_after_text_fails_without_repeating_it(fake: FakeApi) -> None:
    frames = responses_stream("Hello ", "world", "!")
    fake.queue(Sse(frames, end_after=5))  # created, item, part, two deltas: then closed
    seen, error = await drain_until_failure(provider(fake))
    assert text_of(seen) == "Hello world"
    assert "cut before the reply was complete" in str(error)
    assert "after the reply had started streaming" in str(error)
    assert len(fake.requests) == 1


async def test_429_and_500_are_retried_and_400_is_not(fake: FakeApi) -> None:
    fake.queue(
        Status(429, {"error": {"message": "slow down"}}, {"retry-after-ms": "10"}),
        Status(500, {"error": {"message": "oops"}}),
        Sse(responses_stream("ok")),
    )
    deltas = await drain(provider(fake))
    assert text_of(deltas) == "ok" and len(fake.requests) == 3
    fake.queue(Status(400, {"error": {"message": "Unsupported parameter: 'x'."}}))
    _, error = await drain_until_failure(provider(fake))
    assert str(error).endswith("answered 400: Unsupported parameter: 'x'.")


async def test_a_failed_response_is_an_error_retried_when_the_server_erred(
    fake: FakeApi,
) -> None:
    fake.queue(Sse(responses_failed("The server had an error.")), Sse(responses_stream("ok")))
    deltas = await drain(provider(fake))
    assert text_of(deltas) == "ok"
    [notice] = [d for d in deltas if isinstance(d, RetryNotice)]
    assert "The server had an error." in notice.reason
    fake.queue(Sse(responses_failed("Invalid prompt.", code="invalid_prompt")))
    _, error = await drain_until_failure(provider(fake))
    assert "reported an error: Invalid prompt." in str(error) and len(fake.requests) == 3


async def test_a_reply_stopped_at_the_limit_is_continued_with_a_raised_limit(
    fake: FakeApi,
) -> None:
    fake.queue(
        Sse(responses_stream("The first half", incomplete=True)),
        Sse(responses_stream(" and the rest.")),
    )
    deltas = await drain(provider(fake, limit=OutputLimit(8_192, 16_384)))
    assert text_of(deltas) == "The first half and the rest."
    first, second = (r.body for r in fake.requests)
    assert (first["max_output_tokens"], second["max_output_tokens"]) == (8_192, 16_384)
    assert second["input"][-2] == {"role": "assistant", "content": "The first half"}


async def test_malformed_arguments_become_an_arguments_error(fake: FakeApi) -> None:
    fake.queue(Sse(responses_stream(calls=[("call_1", "read_file", ['{"path": a.py}'])])))
    [call] = calls_of(await drain(provider(fake)))
    assert call.arguments == {} and call.arguments_error is not None
    assert "'{\"path\": a.py}'" in call.arguments_error


REFUSED = {
    "error": {
        "message": "The encrypted content gAAA...Bo== could not be verified.",
        "type": "invalid_request_error",
        "param": None,
        "code": "invalid_encrypted_content",
    }
}


async def test_a_refused_reasoning_item_is_left_out_and_the_reply_goes_on(
    fake: FakeApi,
) -> None:
    fake.queue(
        Status(400, REFUSED),
        Sse(responses_stream("Still here.", summary=[["Fresh."]], encrypted="new")),
    )
    history = request(
        UserMessage("q"),
        AssistantMessage("a", (), (kept("rs_old", "old", "stale-key-content"),)),
        UserMessage("q2"),
    )
    deltas = await drain(provider(fake), history)
    assert text_of(deltas) == "Still here."
    [notice] = [d for d in deltas if isinstance(d, RetryNotice)]
    assert notice.delay_seconds == 0
    assert "did not accept the reasoning kept from earlier turns" in notice.reason
    assert "could not be verified" in notice.reason
    first, second = (r.body["input"] for r in fake.requests)
    assert [i.get("type") for i in first] == [None, "reasoning", None, None]
    assert [i.get("type") for i in second] == [None, None, None]
    assert reasoning_of(deltas) == [kept("rs_resp_1", "Fresh.", "new")]
    # The next run (a new provider) of this process does not try it again.
    fake.queue(Sse(responses_stream("Again.")))
    await drain(provider(fake), history)
    assert [i.get("type") for i in fake.requests[2].body["input"]] == [None, None, None]


async def test_a_second_refusal_is_a_clear_error(fake: FakeApi) -> None:
    fake.queue(Status(400, REFUSED), Status(400, REFUSED))
    reasoning = (kept(data="refused-twice"),)
    history = request(UserMessage("q"), AssistantMessage("a", (), reasoning), UserMessage("q2"))
    with pytest.raises(ProviderError) as caught:
        await drain(provider(fake), history)
    assert "answered 400: The encrypted content gAAA...Bo== could not be verified." in str(
        caught.value
    )
    assert len(fake.requests) == 2


async def test_a_server_that_reports_no_usage_gets_an_estimate(fake: FakeApi) -> None:
    frames = responses_stream("four chars", calls=READ_A)
    head, data = frames[-1].split("data: ", 1)
    completed = json.loads(data)
    completed["response"]["usage"] = None
    fake.queue(Sse([*frames[:-1], f"{head}data: {json.dumps(completed)}\n\n"]))
    [usage] = [d for d in await drain(provider(fake)) if isinstance(d, UsageDelta)]
    # Four characters a token: the text and the call's arguments (26 characters).
    assert usage.output_tokens == 7 and usage.input_tokens > 50  # the prompt and the tools
    assert usage.cost_usd is None  # as on Chat Completions: an estimate has no price


async def test_a_fine_tuned_model_of_a_non_reasoning_base_gets_no_reasoning(fake: FakeApi) -> None:
    fake.queue(Sse(responses_stream("hi")))
    await drain(provider(fake, "off", model="ft:gpt-4.1-mini:acme::abc123"))
    assert "reasoning" not in fake.requests[0].body


UNVERIFIED = {
    "error": {
        "message": "Your organization must be verified to generate reasoning summaries.",
        "type": "invalid_request_error",
        "param": "reasoning.summary",
        "code": "unsupported_value",
    }
}


async def test_a_refused_summary_is_dropped_and_the_reply_goes_on(fake: FakeApi) -> None:
    fake.queue(Status(400, UNVERIFIED), Sse(responses_stream("ok")), Sse(responses_stream("2")))
    deltas = await drain(provider(fake, "high", model="o4-mini"))
    assert text_of(deltas) == "ok"
    [notice] = [d for d in deltas if isinstance(d, RetryNotice)]
    assert notice.delay_seconds == 0 and "reasoning summaries" in notice.reason
    assert "sent again without them" in notice.reason
    first, second = (r.body for r in fake.requests)
    assert first["reasoning"] == {"effort": "high", "summary": "auto"}
    assert second["reasoning"] == {"effort": "high"}
    assert second["include"] == ["reasoning.encrypted_content"]
    # The next run of this process on that model asks for none.
    await drain(provider(fake, "high", model="o4-mini"))
    assert fake.requests[2].body["reasoning"] == {"effort": "high"}


async def test_a_model_refusing_reasoning_settings_gets_none_and_the_reply_goes_on(
    fake: FakeApi,
) -> None:
    unsupported = {
        "error": {
            "message": "Unsupported parameter: 'reasoning.effort' is not supported with "
            "this model.",
            "type": "invalid_request_error",
            "param": "reasoning.effort",
            "code": "unsupported_parameter",
        }
    }
    fake.queue(Status(400, unsupported), Sse(responses_stream("ok")))
    deltas = await drain(provider(fake, "low", model="gpt-5-chat-latest"))
    assert text_of(deltas) == "ok"
    second = fake.requests[1].body
    assert "reasoning" not in second and "include" not in second


async def test_with_effort_off_and_no_summary_only_the_encrypted_items_are_asked_for(
    fake: FakeApi,
) -> None:
    fake.queue(Status(400, UNVERIFIED), Sse(responses_stream("ok")))
    await drain(provider(fake, "off", model="o3"))
    second = fake.requests[1].body
    assert "reasoning" not in second and second["include"] == ["reasoning.encrypted_content"]
