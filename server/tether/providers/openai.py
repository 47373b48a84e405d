"""The OpenAI provider: streaming Chat Completions on the official SDK.

Chat Completions is the common ground of OpenAI and the compatible servers (Ollama, vLLM,
llama.cpp, LM Studio), so the same code talks to all of them; only ``baseUrl`` changes.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Literal, Unpack

import openai
from openai import AsyncOpenAI, omit
from openai._streaming import ServerSentEvent, SSEDecoder
from openai.types.chat import (
    ChatCompletionChunk,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageParam,
    ChatCompletionMessageToolCallParam,
)
from openai.types.completion_usage import CompletionUsage

from .base import (
    AssistantMessage,
    ModelRequest,
    TextDelta,
    ThinkingDelta,
    ToolCallReady,
    UsageDelta,
    UserMessage,
    estimate_tokens,
)
from .reasoning import openai_reasons
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

DEFAULT_MODEL = "gpt-5.4"
"""Used when no model is configured: current, and it calls tools through Chat Completions."""

LimitParameter = Literal["max_completion_tokens", "max_tokens"]
"""OpenAI wants ``max_completion_tokens``; compatible servers know ``max_tokens``."""

REQUEST_TIMEOUT = openai.Timeout(300.0, connect=15.0)
"""Reasoning models may stay silent for minutes before their first token."""

log = logging.getLogger(__name__)
_NOTED: set[str] = set()


def openai_messages(request: ModelRequest) -> list[ChatCompletionMessageParam]:
    """The conversation in Chat Completions shape: system, user, assistant, tool messages."""
    messages: list[ChatCompletionMessageParam] = [{"role": "system", "content": request.system}]
    for message in request.messages:
        if isinstance(message, UserMessage):
            messages.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            calls: list[ChatCompletionMessageToolCallParam] = [
                {
                    "id": call.call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
                }
                for call in message.tool_calls
            ]
            if calls:
                messages.append(
                    {"role": "assistant", "content": message.text or None, "tool_calls": calls}
                )
            else:
                messages.append({"role": "assistant", "content": message.text})
        else:
            # Chat Completions has no error flag on tool results; say it in the content.
            content = f"Error: {message.content}" if message.is_error else message.content
            messages.append({"role": "tool", "tool_call_id": message.call_id, "content": content})
    return messages


def openai_tools(request: ModelRequest) -> list[ChatCompletionFunctionToolParam]:
    """The tools as function definitions."""
    return [
        {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": spec.parameters,
            },
        }
        for spec in request.tools
    ]


REASONING_FIELDS = ("reasoning_content", "reasoning")
"""Where OpenAI-compatible servers put a reasoning model's thinking in a streamed delta."""


class _EndWatchingDecoder(SSEDecoder):
    """The SDK's SSE decoder, noting the ``[DONE]`` line the SDK swallows.

    A stream that just stops looks, through the SDK, like one that ended well; only the
    end marker tells them apart.
    """

    def __init__(self) -> None:
        super().__init__()
        self.saw_done = False

    def decode(self, line: str) -> ServerSentEvent | None:
        event = super().decode(line)
        if event is not None and event.data.startswith("[DONE]"):
            self.saw_done = True
        return event


class _Client(AsyncOpenAI):
    """An ``AsyncOpenAI`` whose streams remember whether their ``[DONE]`` arrived."""

    def _make_sse_decoder(self) -> _EndWatchingDecoder:
        return _EndWatchingDecoder()


@dataclass(slots=True)
class _Reply:
    """What one streamed response has assembled so far."""

    text: str = ""
    finish_reason: str | None = None
    usage: CompletionUsage | None = None


class OpenAIProvider(SdkProvider[AsyncOpenAI]):
    """A model behind the Chat Completions API (OpenAI or a compatible server)."""

    name = "openai"

    def __init__(
        self,
        *,
        limit_parameter: LimitParameter = "max_completion_tokens",
        send_effort: bool = False,
        **settings: Unpack[SdkSettings],
    ) -> None:
        """``send_effort``: OpenAI's own endpoint, which takes ``reasoning_effort`` (a
        compatible server's own settings decide instead)."""
        super().__init__(**settings)
        self._limit_parameter = limit_parameter
        self._reasoning_effort = self._effort if send_effort and self._effort != "off" else None
        if self._reasoning_effort is not None and not openai_reasons(self.model):
            self._reasoning_effort = None
            if self.model not in _NOTED:
                _NOTED.add(self.model)
                log.info("reasoningEffort %s ignored: %s does not reason", self._effort, self.model)

    def _client(self) -> AsyncOpenAI:
        return _Client(
            api_key=self._api_key,
            base_url=self._base_url,
            max_retries=0,
            timeout=REQUEST_TIMEOUT,
            http_client=self._http(openai.DefaultAsyncHttpxClient),
        )

    async def _attempt(
        self, client: AsyncOpenAI, request: ModelRequest, max_tokens: int | None
    ) -> PartStream:
        tools = openai_tools(request)
        limited = max_tokens is not None
        # The conversation and the tools go as they are, as ``extra_body`` (merged over the
        # body, its keys winning): the SDK's request transform walks every message of
        # every request against the params' types, which grows with the session (~90 % of
        # a request's CPU 25 prompts in) and changes nothing in what Tether sends — plain
        # JSON values, no aliased key, no file (``test_openai``: the same body either way).
        as_is: dict[str, object] = {"messages": openai_messages(request)}
        if tools:
            as_is["tools"] = tools
        stream = await answered(
            client.chat.completions.create(
                model=self.model,
                messages=(),
                extra_body=as_is,
                stream=True,
                stream_options={"include_usage": True},
                max_completion_tokens=(
                    max_tokens if limited and self._limit_parameter != "max_tokens" else omit
                ),
                max_tokens=max_tokens
                if limited and self._limit_parameter == "max_tokens"
                else omit,
                reasoning_effort=self._reasoning_effort or omit,
            )
        )
        reply = _Reply()
        calls: list[PendingCall] = []
        slots: dict[int, PendingCall] = {}
        async with stream:
            async for chunk in stream:
                for piece in _read_chunk(chunk, reply, calls, slots):
                    yield piece
        # Neither a finish_reason nor [DONE] (which servers omitting finish_reason still send):
        # the connection was closed mid-reply, however cleanly. [DONE] on nothing is cut too.
        decoder = getattr(stream, "_decoder", None)  # an SDK without it: finish_reason only
        ended = isinstance(decoder, _EndWatchingDecoder) and decoder.saw_done
        if reply.finish_reason is None and not (ended and (reply.text or calls)):
            raise StreamInterrupted(
                "the response stream was cut before the reply was complete "
                "(no finish_reason, no [DONE])"
            )
        truncated = reply.finish_reason == "length"
        for call in calls:
            yield ToolCallReady(call.finish(truncated))
        yield self._usage(request, reply, calls)
        yield ReplyEnd(truncated)

    def _usage(self, request: ModelRequest, reply: _Reply, calls: list[PendingCall]) -> UsageDelta:
        usage = reply.usage
        if usage is None:  # some compatible servers ignore include_usage: estimate instead
            sent = json.dumps(openai_messages(request)) + json.dumps(openai_tools(request))
            output = reply.text + "".join(c.arguments for c in calls)
            return UsageDelta(estimate_tokens(sent), estimate_tokens(output))
        details = usage.prompt_tokens_details
        cached = (details.cached_tokens or 0) if details else 0
        written = (details.cache_write_tokens or 0) if details else 0
        cost = self._models.cost(
            self.model,
            input_tokens=max(0, usage.prompt_tokens - cached - written),
            output_tokens=usage.completion_tokens,
            cache_read_tokens=cached,
            cache_write_tokens=written,
        )
        return UsageDelta(usage.prompt_tokens, usage.completion_tokens, cost)

    def _classify(self, exc: Exception) -> Failure | None:
        where = self._base_url or "the OpenAI API"
        if isinstance(exc, openai.APITimeoutError):
            return Failure(f"request to {where} timed out", retryable=True)
        if isinstance(exc, openai.APIConnectionError):
            return Failure(
                f"connection to {where} failed ({underlying_error(exc)})", retryable=True
            )
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            detail = describe_api_error(exc.body, exc.message)
            return Failure(
                f"{where} answered {status}: {detail}",
                retryable=status in (408, 409, 429) or status >= 500,
                retry_after=retry_after_seconds(exc.response.headers),
                too_long=is_too_long(status, f"{detail} {exc.body}"),
            )
        if isinstance(exc, openai.APIError):  # an error event inside the stream
            return Failure(
                f"{where} reported an error: {describe_api_error(exc.body, exc.message)}",
                retryable=exc.type in ("server_error", "rate_limit_exceeded"),
            )
        return None


def _read_chunk(
    chunk: ChatCompletionChunk,
    reply: _Reply,
    calls: list[PendingCall],
    slots: dict[int, PendingCall],
) -> list[TextDelta | ThinkingDelta]:
    """Fold one chunk into ``reply`` and ``calls``; the text and reasoning pieces it carried."""
    if chunk.usage is not None:
        reply.usage = chunk.usage
    texts: list[TextDelta | ThinkingDelta] = []
    for choice in chunk.choices:
        if choice.index != 0:
            continue
        delta = choice.delta
        # Not OpenAI's: vLLM, DeepSeek and llama.cpp stream reasoning in a field of its own
        # (``reasoning_content``; some servers name it ``reasoning``), never sent back.
        extra = delta.model_extra or {}
        for field_name in REASONING_FIELDS:
            thought = extra.get(field_name)
            if isinstance(thought, str) and thought:
                texts.append(ThinkingDelta(thought))
                break
        for text in (delta.content, delta.refusal):
            if text:
                reply.text += text
                texts.append(TextDelta(text))
        for piece in delta.tool_calls or ():
            function = piece.function
            slot = slots.get(piece.index) if piece.index is not None else None
            # A new id at a known index is a new call (some servers send every call at 0).
            if slot is None or (piece.id and slot.call_id and piece.id != slot.call_id):
                slot = PendingCall(call_id=piece.id or f"call_{len(calls) + 1}")
                calls.append(slot)
                slots[piece.index if piece.index is not None else -len(calls)] = slot
            if function is not None:
                slot.add(function.name, function.arguments)
        if choice.finish_reason is not None:
            reply.finish_reason = choice.finish_reason
    return texts


def canned_stream(text: str = "r", call: CannedCall | None = CANNED_CALL) -> bytes:
    """A chat completion stream in the API's wire format: ``text``, then the tool call
    ``call`` (id, name, JSON arguments) or none, the finish, the usage. For the prime
    (``sdk.prime_with``)."""
    deltas: list[tuple[dict[str, object], str | None]] = [
        ({"role": "assistant", "content": text}, None)
    ]
    if call is not None:
        call_id, name, arguments = call
        function = {"name": name, "arguments": arguments}
        tool = {"index": 0, "id": call_id, "type": "function", "function": function}
        deltas.append(({"tool_calls": [tool]}, None))
    finish = "tool_calls" if call is not None else "stop"
    chunks: list[dict[str, object]] = [
        {"choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}
        for delta, reason in [*deltas, ({}, finish)]
    ]
    chunks.append(
        {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    )
    head = {"id": "r", "object": "chat.completion.chunk", "created": 0, "model": "r"}
    frames = [f"data: {json.dumps({**head, **chunk})}\n\n" for chunk in chunks]
    return "".join([*frames, "data: [DONE]\n\n"]).encode()


def prime() -> None:
    """Do what the SDK does only on a client's first use — its lazy imports, the request
    transformation, the stream chunks' models, the TLS context — with one canned
    request answered in-process (``sdk.prime_with``): for the warm-up of ``tether serve`` and
    the daemon, so that the first real run finds it done."""
    provider = OpenAIProvider(model="primed", api_key="unused", base_url="http://127.0.0.1:9/v1")
    prime_with(provider, canned_stream())
