"""The OpenAI provider on the Responses API (``openaiApi: responses``), on the official SDK.

OpenAI's own endpoint keeps a reasoning model's reasoning between tool calls only here: each
reply's reasoning items come back with ``encrypted_content`` (``store: false``: nothing is
kept on OpenAI's side), ride on the reply (``Reasoning``, kept in the session log) and are
sent back before the reply's own items on every later request. Reasoning summaries stream
as thinking. Retries, continuation and the error reports are the Chat Completions
provider's (``openai.OpenAIProvider``), whose client and classification this one shares.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Unpack

import httpx2  # the SDK's HTTP client (a declared dependency): a stream's request
import openai
from openai import AsyncOpenAI, omit
from openai.types.responses import (
    FunctionToolParam,
    ResponseIncludable,
    ResponseInputItemParam,
    ResponseOutputItem,
    ResponseStreamEvent,
    ResponseUsage,
)
from openai.types.shared_params import Reasoning as ReasoningParam

from .base import (
    AssistantMessage,
    ModelRequest,
    Reasoning,
    ReasoningReady,
    TextDelta,
    ThinkingDelta,
    ToolCallReady,
    UsageDelta,
    UserMessage,
    estimate_tokens,
)
from .openai import OpenAIProvider
from .reasoning import openai_reasons
from .retry import Failure, PartStream, PendingCall, ReplyEnd, StreamInterrupted, answered
from .sdk import CANNED_CALL, CannedCall, SdkSettings, prime_with

SOURCE = "openai-responses"
"""``Reasoning.source`` of this provider's reasoning items."""

ENCRYPTED_REASONING: list[ResponseIncludable] = ["reasoning.encrypted_content"]
"""Each reasoning item comes with its ``encrypted_content``, to be sent back (``store``
is false: the API keeps nothing)."""

log = logging.getLogger(__name__)
_NOTED: set[str] = set()
_WITHOUT: dict[str, str] = {}
"""Models whose reasoning summaries (``summary``) or reasoning settings (``reasoning``) the
API refused, for this process: not asked for again."""
_REFUSED: set[str] = set()
"""Encrypted reasoning the API could not verify (made with another organisation's key, or
damaged): never sent again by this process, whichever run or session holds it."""


def responses_input(request: ModelRequest, refused: frozenset[str] = frozenset()) -> list[Any]:
    """The conversation as Responses input items: user and assistant messages, each reply's
    own reasoning items first (unchanged, but for those whose encrypted content the API
    refused), its function calls, and the calls' outputs."""
    items: list[ResponseInputItemParam] = []
    for message in request.messages:
        if isinstance(message, UserMessage):
            items.append({"role": "user", "content": message.text})
        elif isinstance(message, AssistantMessage):
            for block in message.reasoning:
                if block.source == SOURCE and block.data and block.data not in refused:
                    summary = [{"type": "summary_text", "text": block.text}] if block.text else []
                    items.append(
                        {
                            "type": "reasoning",
                            "id": block.signature,
                            "summary": summary,  # type: ignore[typeddict-item]
                            "encrypted_content": block.data,
                        }
                    )
            if message.text or not message.tool_calls:
                items.append({"role": "assistant", "content": message.text})
            for call in message.tool_calls:
                items.append(
                    {
                        "type": "function_call",
                        "call_id": call.call_id,
                        "name": call.name,
                        "arguments": json.dumps(call.arguments),
                    }
                )
        else:
            # No error flag on a function call's output: say it in the output.
            output = f"Error: {message.content}" if message.is_error else message.content
            items.append(
                {"type": "function_call_output", "call_id": message.call_id, "output": output}
            )
    return items


def responses_tools(request: ModelRequest) -> list[FunctionToolParam]:
    """The tools as functions (not strict: the tools' schemas allow optional fields)."""
    return [
        {
            "type": "function",
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
            "strict": False,
        }
        for spec in request.tools
    ]


def is_refused_reasoning(exc: Exception) -> bool:
    """A 400 saying that a reasoning item's encrypted content could not be verified (it was
    made for another organisation or key, or it was damaged)."""
    if not isinstance(exc, openai.BadRequestError):
        return False
    return exc.code == "invalid_encrypted_content" or "encrypted content" in exc.message.lower()


def refused_setting(exc: Exception) -> str | None:
    """The reasoning setting a 400 refuses for the model: ``summary`` (an organisation not
    verified for reasoning summaries, a model without them) or ``reasoning`` (a model that
    takes no reasoning settings at all); None for any other error."""
    if not isinstance(exc, openai.BadRequestError):
        return None
    text = f"{exc.param or ''} {exc.message}".lower()
    if "summar" in text:
        return "summary"
    unsupported = "unsupported" in text or "not supported" in text
    return "reasoning" if unsupported and ("reasoning" in text or "include" in text) else None


@dataclass(slots=True)
class _Reply:
    """What one streamed response has assembled so far."""

    text: str = ""
    complete: bool = False
    truncated: bool = False
    usage: ResponseUsage | None = None
    calls: dict[int, PendingCall] = field(default_factory=dict)
    reasoning: list[Reasoning] = field(default_factory=list)
    summary_at: tuple[int, int] | None = None
    """The reasoning item (output index) and summary part that streamed last."""


class OpenAIResponsesProvider(OpenAIProvider):
    """A model behind OpenAI's Responses API."""

    def __init__(self, **settings: Unpack[SdkSettings]) -> None:
        super().__init__(**settings)
        self._reasons = openai_reasons(self.model)
        if self._effort != "off" and not self._reasons and self.model not in _NOTED:
            _NOTED.add(self.model)
            log.info("reasoningEffort %s ignored: %s does not reason", self._effort, self.model)
        self._sent: frozenset[str] = frozenset()
        """The encrypted reasoning of the last request."""

    def _reasoning(self) -> ReasoningParam | None:
        without = _WITHOUT.get(self.model)
        if not self._reasons or without == "reasoning":
            return None
        reasoning: ReasoningParam = {} if without == "summary" else {"summary": "auto"}
        if self._effort != "off":  # off: the model's own default effort
            reasoning["effort"] = self._effort
        return reasoning

    async def _attempt(
        self, client: AsyncOpenAI, request: ModelRequest, max_tokens: int | None
    ) -> PartStream:
        tools = responses_tools(request)
        items = responses_input(request, frozenset(_REFUSED))
        self._sent = frozenset(
            item["encrypted_content"] for item in items if item.get("type") == "reasoning"
        )
        reasoning = self._reasoning()
        stream = await answered(
            client.responses.create(
                model=self.model,
                instructions=request.system,
                input=[],
                # As the Chat Completions provider does: the conversation as it is, not walked
                # by the SDK's request transform (plain JSON values).
                extra_body={"input": items},
                tools=tools if tools else omit,
                stream=True,
                store=False,
                reasoning=reasoning or omit,  # {}: none asked for but the encrypted items
                include=ENCRYPTED_REASONING if reasoning is not None else omit,
                max_output_tokens=max_tokens if max_tokens is not None else omit,
            )
        )
        reply = _Reply()
        async with stream:
            async for event in stream:
                for piece in _read_event(event, reply, stream.response.request):
                    yield piece
        if not reply.complete:
            raise StreamInterrupted(
                "the response stream was cut before the reply was complete (no response.completed)"
            )
        for block in reply.reasoning:
            yield ReasoningReady(block)
        for index in sorted(reply.calls):
            yield ToolCallReady(reply.calls[index].finish(reply.truncated))
        yield self._usage_of(reply, [request.system, items, tools])
        yield ReplyEnd(reply.truncated)

    def _usage_of(self, reply: _Reply, sent: list[Any]) -> UsageDelta:
        usage = reply.usage
        if usage is None:  # a server that reports none: estimate instead
            output = reply.text + "".join(call.arguments for call in reply.calls.values())
            return UsageDelta(estimate_tokens(json.dumps(sent)), estimate_tokens(output))
        # Read as optional: the SDK builds the usage unvalidated, and servers omit some.
        details = getattr(usage, "input_tokens_details", None)
        cached = getattr(details, "cached_tokens", None) or 0
        written = getattr(details, "cache_write_tokens", None) or 0
        # Output tokens include the reasoning tokens: they are billed as output.
        cost = self._models.cost(
            self.model,
            input_tokens=max(0, usage.input_tokens - cached - written),
            output_tokens=usage.output_tokens,
            cache_read_tokens=cached,
            cache_write_tokens=written,
        )
        return UsageDelta(usage.input_tokens, usage.output_tokens, cost)

    def _classify(self, exc: Exception) -> Failure | None:
        if is_refused_reasoning(exc) and self._sent and not self._sent <= _REFUSED:
            # Sent again at once without it: the model loses its earlier reasoning, the
            # session goes on (a key of another organisation made it, or it was damaged).
            _REFUSED.update(self._sent)
            where = self._base_url or "the OpenAI API"
            assert isinstance(exc, openai.APIStatusError)
            return Failure(
                f"{where} did not accept the reasoning kept from earlier turns "
                f"({exc.status_code}: {_detail(exc)}); sent again without it",
                retryable=True,
                retry_after=0.0,
            )
        setting, sent = refused_setting(exc), self._reasoning()
        still_sent = sent is not None and (setting == "reasoning" or "summary" in sent)
        if setting is not None and still_sent:
            # Asked again at once without it, and never again by this process for the model.
            _WITHOUT[self.model] = "reasoning" if setting == "reasoning" else "summary"
            assert isinstance(exc, openai.APIStatusError)
            what = "reasoning summaries" if setting == "summary" else "reasoning settings"
            log.info("%s: no %s from now on (%s)", self.model, what, _detail(exc))
            return Failure(
                f"{self._base_url or 'the OpenAI API'} refused {what} for {self.model} "
                f"({exc.status_code}: {_detail(exc)}); sent again without them",
                retryable=True,
                retry_after=0.0,
            )
        return super()._classify(exc)


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    message = body.get("message") if isinstance(body, dict) else None
    return message if isinstance(message, str) and message else exc.message


def _read_event(
    event: ResponseStreamEvent, reply: _Reply, request: httpx2.Request
) -> list[TextDelta | ThinkingDelta]:
    """Fold one stream event into ``reply``; the text and thinking pieces it carried."""
    if event.type == "response.output_text.delta" or event.type == "response.refusal.delta":
        reply.text += event.delta
        return [TextDelta(event.delta)]
    if event.type == "response.reasoning_summary_text.delta":
        where = (event.output_index, event.summary_index)
        last, reply.summary_at = reply.summary_at, where
        # A new summary part of the same item is a new paragraph of the thinking.
        if last is not None and last[0] == where[0] and last != where:
            return [ThinkingDelta("\n\n"), ThinkingDelta(event.delta)]
        return [ThinkingDelta(event.delta)]
    if event.type == "response.reasoning_text.delta":  # raw reasoning (open-weight models)
        return [ThinkingDelta(event.delta)]
    if event.type == "response.output_item.added":
        added = event.item
        if added.type == "function_call":
            reply.calls[event.output_index] = PendingCall(added.call_id, added.name)
    elif event.type == "response.function_call_arguments.delta":
        pending = reply.calls.get(event.output_index)
        if pending is not None:
            pending.add(None, event.delta)
    elif event.type == "response.output_item.done":
        _item_done(event.item, event.output_index, reply)
    elif event.type == "response.completed" or event.type == "response.incomplete":
        response = event.response
        reply.complete = True
        reply.usage = response.usage
        details = response.incomplete_details
        reply.truncated = details is not None and details.reason == "max_output_tokens"
    elif event.type == "response.failed":
        error = event.response.error
        message = error.message if error is not None else "the response failed"
        code = error.code if error is not None else None
        raise openai.APIError(message, request, body={"message": message, "type": code})
    elif event.type == "error":
        raise openai.APIError(
            event.message, request, body={"message": event.message, "type": event.code}
        )
    return []


def _item_done(item: ResponseOutputItem, index: int, reply: _Reply) -> None:
    """A complete output item: a call's whole arguments, a reasoning item to keep."""
    if item.type == "function_call":
        pending = reply.calls.setdefault(index, PendingCall(item.call_id, item.name))
        pending.arguments = item.arguments
    elif item.type == "reasoning" and item.encrypted_content:
        summary = "\n\n".join(part.text for part in item.summary)
        reply.reasoning.append(
            Reasoning(SOURCE, "reasoning", summary, item.id, item.encrypted_content)
        )


def canned_stream(text: str = "r", call: CannedCall | None = CANNED_CALL) -> bytes:
    """A Responses event stream in the API's wire format: a reasoning item, a message of
    ``text``, then the function call ``call`` (id, name, JSON arguments) or none, and the
    completion. For the prime (``sdk.prime_with``)."""
    reasoning = {"id": "rs", "type": "reasoning", "summary": [], "encrypted_content": "r"}
    message = {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    output: list[dict[str, Any]] = [reasoning, message]
    events: list[dict[str, Any]] = [
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
        {"type": "response.output_item.added", "output_index": 1, "item": message},
        {
            "type": "response.output_text.delta",
            "item_id": "m",
            "output_index": 1,
            "content_index": 0,
            "delta": text,
        },
    ]
    if call is not None:
        call_id, name, arguments = call
        item = {"type": "function_call", "call_id": call_id, "name": name, "arguments": ""}
        events += [
            {"type": "response.output_item.added", "output_index": 2, "item": item},
            {"type": "response.function_call_arguments.delta", "output_index": 2, "delta": "{"},
            {
                "type": "response.output_item.done",
                "output_index": 2,
                "item": {**item, "arguments": arguments},
            },
        ]
        output.append({**item, "arguments": arguments})
    usage = {
        "input_tokens": 1,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 2,
    }
    response = {"id": "r", "object": "response", "status": "completed", "output": output}
    events.append({"type": "response.completed", "response": {**response, "usage": usage}})
    return "".join(
        f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': n})}\n\n"
        for n, e in enumerate(events)
    ).encode()


def prime() -> None:
    """The Responses API's share of the SDK's first use (its stream events' models, the
    request transformation of its parameters), with one canned request answered in-process
    (``sdk.prime_with``), as ``openai.prime`` does for Chat Completions."""
    provider = OpenAIResponsesProvider(
        model="primed", api_key="unused", base_url="http://127.0.0.1:9/v1", reasoning_effort="low"
    )
    prime_with(provider, canned_stream())
