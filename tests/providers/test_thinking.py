"""Reasoning through the real SDKs against fake APIs: Anthropic's extended thinking (the
effort setting, thinking and signature deltas, blocks sent back unchanged, a cut in the
middle of thinking) and the ``reasoning_content`` of OpenAI-compatible servers."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import pytest

from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import (
    AssistantMessage,
    ModelDelta,
    Reasoning,
    ReasoningReady,
    RetryNotice,
    ThinkingDelta,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from tether.providers.models import known_models
from tether.providers.openai import OpenAIProvider
from tether.providers.reasoning import claude_thinks

from .conftest import FAST_RETRIES, calls_of, drain, request, text_of
from .fakes import FakeApi, Sse, anthropic_stream, openai_delta, openai_stream

READ_A = [("toolu_1", "read_file", ['{"path": "a.py"}'])]


def claude(
    fake: FakeApi, effort: str = "high", model: str = "claude-sonnet-5-5"
) -> AnthropicProvider:
    return AnthropicProvider(
        model=model,
        api_key="test-key",
        base_url=fake.url,
        retry=FAST_RETRIES,
        reasoning_effort=effort,  # type: ignore[typeddict-item]
    )


def thinking_of(deltas: Sequence[ModelDelta]) -> str:
    return "".join(d.text for d in deltas if isinstance(d, ThinkingDelta))


def reasoning_of(deltas: Sequence[ModelDelta]) -> list[Reasoning]:
    return [d.block for d in deltas if isinstance(d, ReasoningReady)]


@pytest.mark.parametrize(
    ("effort", "budget"), [("low", 2_048), ("medium", 6_144), ("high", 16_384)]
)
async def test_an_effort_turns_thinking_on_with_its_budget_interleaved_with_tools(
    fake: FakeApi, effort: str, budget: int
) -> None:
    fake.queue(Sse(anthropic_stream("hi")))
    await drain(claude(fake, effort))
    [sent] = fake.requests
    assert sent.body["thinking"] == {"type": "enabled", "budget_tokens": budget}
    assert sent.body["max_tokens"] > budget  # room for the answer after the thinking
    assert "interleaved-thinking-2025-05-14" in sent.headers["anthropic-beta"]


async def test_effort_off_sends_no_thinking(fake: FakeApi) -> None:
    fake.queue(Sse(anthropic_stream("hi")))
    await drain(claude(fake, "off"))
    [sent] = fake.requests
    assert "thinking" not in sent.body and "anthropic-beta" not in sent.headers


async def test_a_model_that_cannot_think_ignores_the_effort_with_one_note(
    fake: FakeApi, caplog: pytest.LogCaptureFixture
) -> None:
    fake.queue(Sse(anthropic_stream("hi")), Sse(anthropic_stream("again")))
    with caplog.at_level(logging.INFO, logger="tether.providers.anthropic"):
        await drain(claude(fake, "high", model="claude-3-5-haiku-latest"))
        await drain(claude(fake, "high", model="claude-3-5-haiku-latest"))
    assert all("thinking" not in r.body for r in fake.requests)
    notes = [r.getMessage() for r in caplog.records if "reasoningEffort" in r.getMessage()]
    assert notes == ["reasoningEffort high ignored: claude-3-5-haiku-latest cannot think"]


async def test_thinking_streams_as_thinking_never_as_the_answer(fake: FakeApi) -> None:
    fake.queue(
        Sse(
            anthropic_stream(
                "It prints 1.",
                thinking=["Let me ", "look at a.py."],
                signature="EqQBCkYIBxgCKkD+sig/==",
                redacted="EmwKAhgBEgy3va3pzix/LafPsn4aDFIT",
                calls=READ_A,
            )
        )
    )
    deltas = await drain(claude(fake))
    assert [d.text for d in deltas if isinstance(d, ThinkingDelta)] == ["Let me ", "look at a.py."]
    assert text_of(deltas) == "It prints 1."
    assert reasoning_of(deltas) == [
        Reasoning("anthropic", "thinking", "Let me look at a.py.", "EqQBCkYIBxgCKkD+sig/=="),
        Reasoning("anthropic", "redacted_thinking", data="EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"),
    ]
    # The blocks come before the call, so the reply is whole when the loop runs the tool.
    kinds = [type(d).__name__ for d in deltas]
    assert kinds.index("ReasoningReady") < kinds.index("ToolCallReady")


async def test_a_replys_thinking_blocks_go_back_unchanged_before_its_tool_use(
    fake: FakeApi,
) -> None:
    fake.queue(Sse(anthropic_stream("It prints 1.")))
    call = ToolCall("toolu_1", "read_file", {"path": "a.py"})
    reasoning = (
        Reasoning("anthropic", "thinking", "I should read a.py.", "EqQBCkYIBxgCKkD+sig/=="),
        Reasoning("anthropic", "redacted_thinking", data="EmwKAhgBEgy3va3pzix"),
        Reasoning("openai-chat", "reasoning_content", "another model's reasoning"),
    )
    # A fresh provider (a new run, a new process): the blocks come from the message alone.
    await drain(
        claude(fake),
        request(
            UserMessage("what does a.py do?"),
            AssistantMessage("", (call,), reasoning),
            ToolResultMessage(call.call_id, "read_file", "print(1)", False),
        ),
    )
    assert fake.requests[0].body["messages"][1]["content"] == [
        {
            "type": "thinking",
            "thinking": "I should read a.py.",
            "signature": "EqQBCkYIBxgCKkD+sig/==",
        },
        {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix"},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.py"}},
    ]


async def test_thinking_blocks_are_not_sent_when_thinking_is_off(fake: FakeApi) -> None:
    fake.queue(Sse(anthropic_stream("ok")))
    reasoning = (Reasoning("anthropic", "thinking", "hmm", "sig"),)
    await drain(
        claude(fake, "off"),
        request(UserMessage("q"), AssistantMessage("a", (), reasoning), UserMessage("q2")),
    )
    sent = fake.requests[0].body["messages"][1]["content"]
    assert sent == [{"type": "text", "text": "a"}]


async def test_a_stream_cut_in_the_middle_of_thinking_is_retried(fake: FakeApi) -> None:
    cut = anthropic_stream("lost answer", thinking=["First ", "try"], calls=READ_A)
    # message_start, ping, block start, one thinking delta: then the connection drops.
    fake.queue(
        Sse(cut, drop_after=4),
        Sse(anthropic_stream("Done.", thinking=["Second ", "try"], signature="sig-2")),
    )
    deltas = await drain(claude(fake))
    assert len(fake.requests) == 2
    assert [type(d) for d in deltas[:2]] == [ThinkingDelta, RetryNotice]
    assert thinking_of(deltas) == "First Second try"
    assert text_of(deltas) == "Done." and calls_of(deltas) == []
    # Only the complete reply's block is kept, with its own signature.
    assert reasoning_of(deltas) == [Reasoning("anthropic", "thinking", "Second try", "sig-2")]


# --- OpenAI-compatible servers: reasoning_content ------------------------------------------


def local(fake: FakeApi) -> OpenAIProvider:
    return OpenAIProvider(
        model="deepseek-reasoner", api_key="k", base_url=fake.url + "/v1", retry=FAST_RETRIES
    )


async def test_reasoning_content_deltas_stream_as_thinking(fake: FakeApi) -> None:
    frames = openai_stream("The answer", " is 4.")
    # vLLM, DeepSeek and llama.cpp send the reasoning first, in its own delta field.
    reasoning = [
        openai_delta({"role": "assistant", "content": None, "reasoning_content": "2 and 2"}),
        openai_delta({"content": None, "reasoning_content": " make 4."}),
    ]
    fake.queue(Sse(reasoning + frames))
    deltas = await drain(local(fake))
    assert [d.text for d in deltas if isinstance(d, ThinkingDelta)] == ["2 and 2", " make 4."]
    assert text_of(deltas) == "The answer is 4."
    assert reasoning_of(deltas) == []  # not sent back: these servers want it left out


# --- a thinking block whose signature the API refuses --------------------------------------

REFUSED = "messages.1.content.0: Invalid `signature` in `thinking` block"


async def test_a_refused_signature_is_left_out_and_the_reply_goes_on(fake: FakeApi) -> None:
    fake.refused_signatures.add("sig-from-an-edited-log")
    fake.queue(Sse(anthropic_stream("Still here.")), Sse(anthropic_stream("Again.")))
    kept = (
        Reasoning("anthropic", "thinking", "old thoughts", "sig-from-an-edited-log"),
        Reasoning("anthropic", "redacted_thinking", data="EmwKAhgBEgy3"),
    )
    conversation = request(
        UserMessage("one?"), AssistantMessage("One.", (), kept), UserMessage("two?")
    )
    deltas = await drain(claude(fake), conversation)
    assert text_of(deltas) == "Still here."
    [notice] = [d for d in deltas if isinstance(d, RetryNotice)]
    assert REFUSED in notice.reason and "sent again without them" in notice.reason
    first, second = (r.body["messages"][1]["content"] for r in fake.requests)
    assert first[0]["signature"] == "sig-from-an-edited-log"
    assert second == [{"type": "text", "text": "One."}]  # the blocks it came with are left out
    assert fake.requests[1].body["thinking"]["type"] == "enabled"  # thinking stays on
    # Not sent again by this process, whichever run or provider holds it.
    await drain(claude(fake), conversation)
    assert len(fake.requests) == 3
    assert fake.requests[2].body["messages"][1]["content"] == [{"type": "text", "text": "One."}]


async def test_a_refused_signature_in_the_tool_loop_goes_on_without_thinking_for_it(
    fake: FakeApi,
) -> None:
    # The API wants the reply whose tool loop goes on to start with its thinking: without
    # the refused block, the loop's requests go without thinking (the fake checks the rule)
    # until the user's next message.
    fake.refused_signatures.add("sig-of-the-loop")
    fake.queue(Sse(anthropic_stream(calls=[("toolu_2", "list_files", ["{}"])])))
    call = ToolCall("toolu_1", "read_file", {"path": "a.py"})
    kept = (Reasoning("anthropic", "thinking", "read a.py", "sig-of-the-loop"),)
    loop = [
        UserMessage("what does a.py do?"),
        AssistantMessage("", (call,), kept),
        ToolResultMessage(call.call_id, "read_file", "print(1)", False),
    ]
    deltas = await drain(claude(fake), request(*loop))
    assert [c.call_id for c in calls_of(deltas)] == ["toolu_2"] and len(fake.requests) == 2
    second = fake.requests[1].body
    assert "thinking" not in second
    assert [b["type"] for b in second["messages"][1]["content"]] == ["tool_use"]
    # The loop goes on with a reply made without thinking: still none for it.
    listed = ToolCall("toolu_2", "list_files", {})
    loop += [
        AssistantMessage("", (listed,)),
        ToolResultMessage("toolu_2", "list_files", "a.py", False),
    ]
    fake.queue(Sse(anthropic_stream("It prints 1.")), Sse(anthropic_stream("Yes.")))
    assert text_of(await drain(claude(fake), request(*loop))) == "It prints 1."
    assert "thinking" not in fake.requests[2].body
    # The user's next message: the model thinks again.
    loop += [AssistantMessage("It prints 1."), UserMessage("sure?")]
    assert text_of(await drain(claude(fake), request(*loop))) == "Yes."
    assert fake.requests[3].body["thinking"]["type"] == "enabled"


async def test_every_thinking_block_of_a_refused_request_is_left_out_at_once(
    fake: FakeApi,
) -> None:
    fake.refused_signatures.update({"sig-a", "sig-b"})
    kept_a = (Reasoning("anthropic", "thinking", "a", "sig-a"),)
    kept_b = (Reasoning("anthropic", "thinking", "b", "sig-b"),)
    conversation = request(
        UserMessage("one?"),
        AssistantMessage("One.", (), kept_a),
        UserMessage("two?"),
        AssistantMessage("Two.", (), kept_b),
        UserMessage("three?"),
    )
    # The API names the first bad block; every block the request carried is left out at once.
    fake.queue(Sse(anthropic_stream("Three.")))
    deltas = await drain(claude(fake), conversation)
    assert text_of(deltas) == "Three." and len(fake.requests) == 2
    sent = [b["type"] for m in fake.requests[1].body["messages"] for b in m["content"]]
    assert "thinking" not in sent


@pytest.mark.parametrize(
    ("model", "thinks"),
    [
        ("claude-3-opus-20240229", False),
        ("claude-3-5-sonnet-20241022", False),
        ("claude-3-haiku-20240307", False),
        ("claude-3-5-haiku", False),
        ("claude-2.1", False),
        ("claude-3-7-sonnet-20250219", True),
        ("claude-sonnet-4-5", True),
        ("claude-haiku-4-5", True),
        ("claude-opus-5", True),
    ],
)
async def test_only_models_that_think_get_thinking(fake: FakeApi, model: str, thinks: bool) -> None:
    fake.queue(Sse(anthropic_stream("hi")))
    kept = (Reasoning("anthropic", "thinking", "hmm", "sig"),)
    await drain(
        claude(fake, "medium", model=model),
        request(UserMessage("q"), AssistantMessage("a", (), kept), UserMessage("q2")),
    )
    [sent] = fake.requests
    assert ("thinking" in sent.body) is thinks
    assert ("anthropic-beta" in sent.headers) is thinks
    sent_back = [b["type"] for b in sent.body["messages"][1]["content"]]
    assert sent_back == (["thinking", "text"] if thinks else ["text"])


def test_of_the_known_claude_models_only_3_5_haiku_cannot_think() -> None:
    assert [m for m in known_models("anthropic") if not claude_thinks(m)] == ["claude-3-5-haiku"]
