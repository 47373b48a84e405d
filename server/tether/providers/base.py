"""The Provider seam: conversation in, a stream of model deltas out.

OpenAI, Anthropic and the scripted model implement it; the loop never imports an SDK.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A complete tool call the model asked for."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    arguments_error: str | None = None
    """Set when the model's arguments were not valid JSON; the call becomes a tool error."""


@dataclass(frozen=True, slots=True)
class UserMessage:
    """What the user said (the prompt, or a steer message)."""

    text: str
    role: str = field(default="user", init=False)


@dataclass(frozen=True, slots=True)
class Reasoning:
    """A block of a reply's reasoning, kept as the provider gave it.

    ``source`` names who made it (``anthropic``, ``openai-responses``, ``openai-chat``): a
    provider sends back only its own blocks, unchanged — Anthropic checks each thinking
    block's ``signature`` and wants a ``redacted_thinking`` block's opaque ``data`` back as it
    came; OpenAI's Responses API wants a reasoning item's ``encrypted_content`` (``data``).
    """

    source: str
    kind: str
    """``thinking``, ``redacted_thinking`` (Anthropic), ``reasoning`` (Responses API) or
    ``reasoning_content``."""
    text: str = ""
    """The thinking, or a reasoning item's summary."""
    signature: str = ""
    """A thinking block's signature; a Responses reasoning item's id."""
    data: str = ""
    """A redacted block's data; a Responses reasoning item's encrypted content."""


@dataclass(frozen=True, slots=True)
class AssistantMessage:
    """One model reply: its text, the tool calls it asked for, and its reasoning."""

    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    reasoning: tuple[Reasoning, ...] = ()
    role: str = field(default="assistant", init=False)


@dataclass(frozen=True, slots=True)
class ToolResultMessage:
    """The observation fed back for one tool call."""

    call_id: str
    tool: str
    content: str
    is_error: bool
    role: str = field(default="tool", init=False)


Message = UserMessage | AssistantMessage | ToolResultMessage


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool as the model sees it."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of assistant text, as it streams."""

    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """A piece of the model's reasoning, as it streams: shown as thinking, never as the
    answer."""

    text: str


@dataclass(frozen=True, slots=True)
class ReasoningReady:
    """A reasoning block of the reply, complete (its signature arrived): the loop keeps it
    with the reply, so that it is sent back on the turns that need it."""

    block: Reasoning


@dataclass(frozen=True, slots=True)
class ToolCallReady:
    """A tool call whose arguments have fully arrived."""

    call: ToolCall


@dataclass(frozen=True, slots=True)
class UsageDelta:
    """Tokens used by this model call (reported once per call), and its cost when known."""

    input_tokens: int
    output_tokens: int
    cost_usd: float | None = None


@dataclass(frozen=True, slots=True)
class RetryNotice:
    """A request of this call failed transiently and is sent again after ``delay_seconds``
    (nothing of it had streamed); the run tells its client, the reply goes on."""

    attempt: int
    delay_seconds: float
    reason: str


ModelDelta = TextDelta | ThinkingDelta | ReasoningReady | ToolCallReady | UsageDelta | RetryNotice


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """Everything one model call needs."""

    system: str
    messages: Sequence[Message]
    tools: Sequence[ToolSpec]


class Provider(Protocol):
    """A model: streams one reply to the conversation so far."""

    name: str
    model: str
    context_window: int
    """Tokens one call may hold: the loop keeps each request within it."""

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        """Yield deltas of one reply; raise ``ProviderError`` when it cannot."""
        ...


CHARS_PER_TOKEN = 4
"""The rough size of a token in characters, for estimates (code often has fewer)."""


def tokens_for_chars(chars: int) -> int:
    """A rough token count for ``chars`` characters (rounded up)."""
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def estimate_tokens(text: str) -> int:
    """A rough token count (four characters a token) for models that report none."""
    return tokens_for_chars(len(text))
