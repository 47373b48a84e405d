"""The Anthropic provider: streaming Messages on the official SDK, with prompt caching."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Set
from dataclasses import dataclass, field
from typing import Any, Unpack, cast

import anthropic
import httpx2  # the SDK's HTTP client (a declared dependency): its mid-stream errors
from anthropic import AsyncAnthropic, omit
from anthropic.types import (
    AssistantMessageParam,
    ContentBlockParam,
    MessageParam,
    RawMessageStreamEvent,
    TextBlockParam,
    ThinkingConfigParam,
    ToolParam,
    UserMessageParam,
)

from .base import (
    AssistantMessage,
    ModelRequest,
    Reasoning,
    ReasoningReady,
    TextDelta,
    ThinkingDelta,
    ToolCallReady,
    ToolResultMessage,
    UsageDelta,
    UserMessage,
)
from .reasoning import claude_thinks
from .retry import (
    Failure,
    PartStream,
    PendingCall,
    ReplyEnd,
    StreamInterrupted,
    answered,
    describe_api_error,
    is_too_long,
    retry_after_seconds,
    underlying_error,
)
from .sdk import CANNED_CALL, CannedCall, SdkProvider, SdkSettings, prime_with

DEFAULT_MODEL = "claude-sonnet-5-5"
"""Used when no model is configured: the current Sonnet."""

OUTPUT_LIMIT: tuple[int, int] = (16_384, 32_000)
"""``max_tokens`` of a request, and after a reply was cut off (every Claude 4+ allows it)."""

REQUEST_TIMEOUT = anthropic.Timeout(300.0, connect=15.0)
"""Thinking may keep a stream silent for minutes."""

THINKING_BUDGET = {"low": 2_048, "medium": 6_144, "high": 16_384}
"""``budget_tokens`` of extended thinking for each ``reasoningEffort``."""

THINKING_HEADROOM = 8_192
"""Output tokens a request keeps for the answer beyond the thinking budget."""

INTERLEAVED_THINKING = {"anthropic-beta": "interleaved-thinking-2025-05-14"}
"""Thinking between tool calls too, not only before the first (Claude 4 and later)."""

SOURCE = "anthropic"
"""``Reasoning.source`` of this provider's thinking blocks."""

log = logging.getLogger(__name__)
_NOTED: set[str] = set()
_REFUSED: set[str] = set()
"""Thinking blocks (their signature, or a redacted block's data) the API refused: never sent
again by this process, whichever run or session holds them."""

_REFUSED_BLOCK = re.compile(r"invalid\W+(signature|data)\W+in\W+(redacted_)?thinking", re.I)
"""The API's 400 for a thinking block it cannot verify ("messages.1.content.0: Invalid
`signature` in `thinking` block"): made for another conversation or key, or edited."""

_RETRYABLE_TYPES = ("overloaded_error", "api_error", "rate_limit_error", "timeout_error")
"""Error types of an ``error`` event inside a stream that a new request may not meet."""


def anthropic_messages(
    request: ModelRequest, thinking: bool = False, refused: Set[str] = frozenset()
) -> list[MessageParam]:
    """The conversation as Messages turns; consecutive turns of one role are merged.

    With ``thinking``, each reply's own thinking and redacted-thinking blocks come first in
    its turn, unchanged (the API checks their signatures, and wants those of the reply whose
    tool loop goes on), but for those ``refused`` (by ``block_key``); without, none is sent.
    """
    turns: list[tuple[str, list[ContentBlockParam]]] = []

    def add(role: str, block: ContentBlockParam) -> None:
        if turns and turns[-1][0] == role:
            turns[-1][1].append(block)
        else:
            turns.append((role, [block]))

    for message in request.messages:
        if isinstance(message, UserMessage):
            add("user", {"type": "text", "text": message.text or "(empty)"})
        elif isinstance(message, AssistantMessage):
            calls = message.tool_calls
            for block in message.reasoning if thinking else ():
                if block.source == SOURCE and block_key(block) not in refused:
                    add("assistant", _thinking_param(block))
            if message.text or not calls:
                add("assistant", {"type": "text", "text": message.text or "(no reply)"})
            for call in calls:
                add(
                    "assistant",
                    {
                        "type": "tool_use",
                        "id": call.call_id,
                        "name": call.name,
                        "input": call.arguments,
                    },
                )
        else:
            add(
                "user",
                {
                    "type": "tool_result",
                    "tool_use_id": message.call_id,
                    "content": message.content or "(no output)",
                    "is_error": message.is_error,
                },
            )
    if turns and turns[-1][0] == "user":
        # A breakpoint on the newest turn caches the whole conversation for the next step.
        cast(TextBlockParam, turns[-1][1][-1])["cache_control"] = {"type": "ephemeral"}
    messages: list[MessageParam] = []
    for role, blocks in turns:
        if role == "user":
            messages.append(UserMessageParam(role="user", content=blocks))
        else:
            messages.append(AssistantMessageParam(role="assistant", content=blocks))
    return messages


def block_key(block: Reasoning) -> str:
    """What identifies a thinking block to the API: its signature, a redacted block's data."""
    return block.data if block.kind == "redacted_thinking" else block.signature


def loop_lost_its_thinking(request: ModelRequest, refused: Set[str]) -> bool:
    """Whether the tool loop going on (the replies since the user's last message, the last
    one followed by tool results) lost thinking blocks to ``refused`` and its last reply has
    none left to start with: with thinking on, the API wants that reply to start with one,
    so the loop's requests go without thinking until the user's next message."""
    messages = request.messages
    users = [i for i, m in enumerate(messages) if isinstance(m, UserMessage)]
    loop = messages[users[-1] + 1 if users else 0 :]
    replies = [m for m in loop if isinstance(m, AssistantMessage)]
    if not replies or not isinstance(loop[-1], ToolResultMessage):
        return False
    keys = [[block_key(b) for b in r.reasoning if b.source == SOURCE] for r in replies]
    lost = any(key in refused for reply in keys for key in reply)
    return lost and all(key in refused for key in keys[-1])


def _thinking_param(block: Reasoning) -> ContentBlockParam:
    if block.kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.data}
    return {"type": "thinking", "thinking": block.text, "signature": block.signature}


def thinking_config(model: str, effort: str) -> ThinkingConfigParam | None:
    """The ``thinking`` of a request: None when ``effort`` is off or ``model`` cannot think."""
    if effort not in THINKING_BUDGET or not claude_thinks(model):
        return None
    return {"type": "enabled", "budget_tokens": THINKING_BUDGET[effort]}


def anthropic_system(request: ModelRequest) -> list[TextBlockParam]:
    """The system prompt as one cached block."""
    return [{"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}]


def anthropic_tools(request: ModelRequest) -> list[ToolParam]:
    """The tools, the last one carrying the cache breakpoint for all of them."""
    tools: list[ToolParam] = [
        {"name": s.name, "description": s.description, "input_schema": s.parameters}
        for s in request.tools
    ]
    if tools:
        tools[-1]["cache_control"] = {"type": "ephemeral"}
    return tools


@dataclass(slots=True)
class _Reply:
    """What one streamed message has assembled so far."""

    text: str = ""
    stop_reason: str | None = None
    complete: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    calls: dict[int, PendingCall] = field(default_factory=dict)
    thinking: dict[int, dict[str, str]] = field(default_factory=dict)
    """Thinking blocks by index: their kind, text, signature or data, as they arrived."""

    def reasoning(self) -> list[Reasoning]:
        return [
            Reasoning(SOURCE, b["kind"], b["text"], b["signature"], b["data"])
            for _, b in sorted(self.thinking.items())
        ]


class AnthropicProvider(SdkProvider[AsyncAnthropic]):
    """A Claude model behind the Messages API."""

    name = "anthropic"
    default_limit = OUTPUT_LIMIT

    def __init__(self, **settings: Unpack[SdkSettings]) -> None:
        super().__init__(**settings)
        self._thinking = thinking_config(self.model, self._effort)
        if self._effort != "off" and self._thinking is None and self.model not in _NOTED:
            _NOTED.add(self.model)
            log.info("reasoningEffort %s ignored: %s cannot think", self._effort, self.model)
        self._sent: frozenset[str] = frozenset()
        """The thinking blocks of the last request (``block_key``)."""

    def _client(self) -> AsyncAnthropic:
        return AsyncAnthropic(
            api_key=self._api_key,
            base_url=self._base_url,
            max_retries=0,
            timeout=REQUEST_TIMEOUT,
            http_client=self._http(anthropic.DefaultAsyncHttpxClient),
        )

    async def _attempt(
        self, client: AsyncAnthropic, request: ModelRequest, max_tokens: int | None
    ) -> PartStream:
        tools = anthropic_tools(request)
        limit = max_tokens or OUTPUT_LIMIT[0]
        thinking, refused = self._thinking, frozenset(_REFUSED)
        if thinking is not None and loop_lost_its_thinking(request, refused):
            thinking = None  # until the user's next message: the API wants it from the loop
        if thinking is not None and thinking["type"] == "enabled":
            limit = max(limit, thinking["budget_tokens"] + THINKING_HEADROOM)
        messages = anthropic_messages(request, thinking=thinking is not None, refused=refused)
        self._sent = frozenset(
            block["signature"] if block["type"] == "thinking" else block["data"]
            for message in messages
            if message["role"] == "assistant"
            for block in cast(list[dict[str, str]], message["content"])
            if block["type"] in ("thinking", "redacted_thinking")
        )
        stream = await answered(
            client.messages.create(
                model=self.model,
                max_tokens=limit,
                system=anthropic_system(request),
                messages=messages,
                tools=tools if tools else omit,
                thinking=thinking if thinking is not None else omit,
                extra_headers=INTERLEAVED_THINKING if thinking is not None else None,
                stream=True,
            )
        )
        reply = _Reply()
        async with stream:
            async for event in stream:
                text, thought = _read_event(event, reply)
                if text:
                    yield TextDelta(text)
                elif thought:
                    yield ThinkingDelta(thought)
        # message_delta carries the stop_reason; message_stop only closes the stream after it.
        if not reply.complete and reply.stop_reason is None:
            raise StreamInterrupted(
                "the response stream was cut before the message was complete "
                "(no message_delta stop_reason, no message_stop)"
            )
        truncated = reply.stop_reason == "max_tokens"
        calls = [reply.calls[i].finish(truncated) for i in sorted(reply.calls)]
        for block in reply.reasoning():
            yield ReasoningReady(block)
        for call in calls:
            yield ToolCallReady(call)
        cost = self._models.cost(
            self.model,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            cache_read_tokens=reply.cache_read,
            cache_write_tokens=reply.cache_write,
        )
        total_input = reply.input_tokens + reply.cache_read + reply.cache_write
        yield UsageDelta(total_input, reply.output_tokens, cost)
        yield ReplyEnd(truncated)

    def _classify(self, exc: Exception) -> Failure | None:
        where = self._base_url or "the Anthropic API"
        if isinstance(exc, anthropic.BadRequestError) and self._sent - _REFUSED:
            detail = describe_api_error(exc.body, exc.message)
            if _REFUSED_BLOCK.search(detail):
                # The API names the first block it refused; the cause (another key or
                # conversation, an edited log) is seldom that block's alone: every block the
                # request carried is left out, and the request sent again at once.
                _REFUSED.update(self._sent)
                log.info("thinking blocks refused, left out from now on: %s", detail)
                return Failure(
                    f"{where} did not accept the thinking kept from earlier turns "
                    f"({exc.status_code}: {detail}); sent again without them",
                    retryable=True,
                    retry_after=0.0,
                )
        if isinstance(exc, anthropic.APITimeoutError):
            return Failure(f"request to {where} timed out", retryable=True)
        if isinstance(exc, anthropic.APIConnectionError):
            return Failure(
                f"connection to {where} failed ({underlying_error(exc)})", retryable=True
            )
        if isinstance(exc, httpx2.TransportError):  # the SDK does not wrap mid-stream errors
            return Failure(
                f"connection to {where} lost ({type(exc).__name__}: {exc})", retryable=True
            )
        if isinstance(exc, anthropic.APIStatusError):
            status = exc.status_code
            detail = describe_api_error(exc.body, exc.message)
            if status < 400:  # an ``error`` event inside a 200 stream
                return Failure(
                    f"{where} reported {exc.type or 'an error'}: {detail}",
                    retryable=exc.type in _RETRYABLE_TYPES,
                )
            return Failure(
                f"{where} answered {status}: {detail}",
                retryable=status in (408, 409, 429) or status >= 500,
                retry_after=retry_after_seconds(exc.response.headers),
                too_long=is_too_long(status, detail),
            )
        return None


def _read_event(event: RawMessageStreamEvent, reply: _Reply) -> tuple[str, str]:
    """Fold one stream event into ``reply``; the text and the thinking it carried."""
    if event.type == "message_start":
        usage = event.message.usage
        reply.input_tokens = usage.input_tokens
        reply.output_tokens = usage.output_tokens
        reply.cache_read = usage.cache_read_input_tokens or 0
        reply.cache_write = usage.cache_creation_input_tokens or 0
    elif event.type == "content_block_start":
        block = event.content_block
        if block.type == "text":
            reply.text += block.text
            return block.text, ""
        if block.type == "tool_use":
            reply.calls[event.index] = PendingCall(block.id, block.name)
        elif block.type == "thinking":
            reply.thinking[event.index] = _block("thinking", block.thinking, block.signature)
            return "", block.thinking
        elif block.type == "redacted_thinking":
            reply.thinking[event.index] = _block("redacted_thinking", data=block.data)
    elif event.type == "content_block_delta":
        delta = event.delta
        if delta.type == "text_delta":
            reply.text += delta.text
            return delta.text, ""
        if delta.type == "input_json_delta" and event.index in reply.calls:
            reply.calls[event.index].add(None, delta.partial_json)
        elif delta.type == "thinking_delta" and event.index in reply.thinking:
            reply.thinking[event.index]["text"] += delta.thinking
            return "", delta.thinking
        elif delta.type == "signature_delta" and event.index in reply.thinking:
            reply.thinking[event.index]["signature"] += delta.signature
    elif event.type == "message_delta":
        reply.stop_reason = event.delta.stop_reason
        final = event.usage
        reply.output_tokens = final.output_tokens
        # Newer API versions repeat the (cumulative) input counts here.
        if final.input_tokens is not None:
            reply.input_tokens = final.input_tokens
        if final.cache_read_input_tokens is not None:
            reply.cache_read = final.cache_read_input_tokens
        if final.cache_creation_input_tokens is not None:
            reply.cache_write = final.cache_creation_input_tokens
    elif event.type == "message_stop":
        reply.complete = True
    return "", ""


def _block(kind: str, text: str = "", signature: str = "", data: str = "") -> dict[str, str]:
    return {"kind": kind, "text": text, "signature": signature, "data": data}


def canned_stream(text: str = "r", call: CannedCall | None = CANNED_CALL) -> bytes:
    """A Messages event stream in the API's wire format: a text block of ``text``, then the
    tool call ``call`` (id, name, JSON arguments) or none, the stop. For the prime
    (``sdk.prime_with``)."""
    usage = {"input_tokens": 1, "output_tokens": 1}
    message = {"id": "r", "type": "message", "role": "assistant", "model": "r", "content": []}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"message": {**message, "stop_reason": None, "usage": usage}}),
        ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"index": 0}),
    ]
    if call is not None:
        call_id, name, arguments = call
        block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": arguments}
        events += [
            ("content_block_start", {"index": 1, "content_block": block}),
            ("content_block_delta", {"index": 1, "delta": delta}),
            ("content_block_stop", {"index": 1}),
        ]
    stop = "tool_use" if call is not None else "end_turn"
    events += [
        ("message_delta", {"delta": {"stop_reason": stop}, "usage": {"output_tokens": 1}}),
        ("message_stop", {}),
    ]
    return "".join(
        f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n" for name, data in events
    ).encode()


def prime() -> None:
    """Do what the SDK does only on a client's first use — its lazy imports, the request
    transformation, the stream events' validators, the TLS context — with one canned
    request answered in-process (``sdk.prime_with``): for the warm-up of ``tether serve`` and
    the daemon, so that the first real run finds it done."""
    prime_with(AnthropicProvider(model="primed", api_key="unused"), canned_stream())
