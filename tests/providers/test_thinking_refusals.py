"""Refused thinking blocks under generated conversations, through the real Anthropic SDK
against the fake API (which refuses the chosen signatures with the API's 400 and holds its
rule that, thinking on, a tool loop's last reply starts with its thinking): whatever the
shape — prompts, tool loops, an answer or a loop going on, which blocks are refused — the
model call ends well after one refusal, its last request carries no refused block, and a
new prompt still thinks."""

from __future__ import annotations

import asyncio
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from tether.providers.base import (
    AssistantMessage,
    Message,
    Reasoning,
    RetryNotice,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

from .conftest import drain, request, text_of
from .fakes import FakeApi, Sse, anthropic_stream
from .test_thinking import claude

_ids = itertools.count()

Prompt = tuple[int, bool, bool]
"""A prompt: its tool loop's length, whether it ends with an answer, redacted blocks too."""


def conversation(prompts: list[Prompt], refused: list[bool]) -> tuple[list[Message], set[str]]:
    """The messages of ``prompts``, each reply thinking first (as the API's replies do with
    thinking on), the signatures chosen by ``refused`` (cycled) refused."""
    messages: list[Message] = []
    signatures: set[str] = set()
    choice = itertools.cycle(refused)

    def thought() -> tuple[Reasoning, ...]:
        signature = f"sig-{next(_ids)}"
        if next(choice):
            signatures.add(signature)
        return (Reasoning("anthropic", "thinking", "hm", signature),)

    for n, (loop, answered, redacted) in enumerate(prompts):
        messages.append(UserMessage(f"prompt {n}"))
        for _ in range(loop):
            call = ToolCall(f"toolu_{next(_ids)}", "list_files", {})
            extra = (Reasoning("anthropic", "redacted_thinking", data="EmwK"),) if redacted else ()
            messages.append(AssistantMessage("", (call,), thought() + extra))
            messages.append(ToolResultMessage(call.call_id, "list_files", "a.py", False))
        if answered or loop == 0:
            messages.append(AssistantMessage(f"answer {n}", (), thought()))
    if isinstance(messages[-1], AssistantMessage):
        messages.append(UserMessage("and now?"))
    return messages, signatures


def sent_signatures(body: dict[str, object]) -> set[str]:
    turns = body["messages"]
    assert isinstance(turns, list)
    return {b["signature"] for t in turns for b in t["content"] if b["type"] == "thinking"}


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2), st.booleans(), st.booleans()), min_size=1, max_size=3),
    st.lists(st.booleans(), min_size=1, max_size=5).filter(any),
)
def test_any_refusal_is_recovered_from_once(prompts: list[Prompt], refused: list[bool]) -> None:
    messages, signatures = conversation(prompts, refused)
    with FakeApi() as fake:
        fake.refused_signatures.update(signatures)
        fake.queue(Sse(anthropic_stream("Done.")), Sse(anthropic_stream("Again.")))
        deltas = asyncio.run(drain(claude(fake, "low"), request(*messages)))
        bodies = [r.body for r in fake.requests]
        # Once more, with the reply and a new prompt: the model thinks again.
        then = [*messages, AssistantMessage("Done."), UserMessage("more?")]
        again = asyncio.run(drain(claude(fake, "low"), request(*then)))
        last = fake.requests[-1].body
    assert text_of(deltas) == "Done." and text_of(again) == "Again."
    if signatures & sent_signatures(bodies[0]):
        assert len(bodies) == 2 and [type(d) for d in deltas].count(RetryNotice) == 1
    assert not sent_signatures(bodies[-1]) & signatures
    assert not sent_signatures(last) & signatures and "thinking" in last
