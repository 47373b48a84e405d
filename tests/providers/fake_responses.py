"""OpenAI Responses API streams (``POST /v1/responses``, ``stream: true``) for ``FakeApi``.

The wire format Codex speaks (``wire_api = "responses"``): typed server-sent events, a
``response.created``, then per output item ``response.output_item.added`` → its deltas →
``response.output_item.done``, and ``response.completed`` with the usage. Items are
assistant messages (``output_text`` deltas), ``function_call`` (JSON ``arguments``) and
``custom_tool_call`` (free-form ``input``, e.g. Codex's ``apply_patch``), after a
``reasoning`` item when asked (its summary parts streamed as
``response.reasoning_summary_text.delta``; its ``encrypted_content`` complete only in
``response.output_item.done``, as the API sends it). A reply stopped at the output limit
ends in ``response.incomplete``; a failed one in ``response.failed``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any


class _Events:
    def __init__(self, response_id: str) -> None:
        self.frames: list[str] = []
        self.response_id = response_id
        self._sequence = 0

    def add(self, kind: str, **data: Any) -> None:
        body = {"type": kind, "sequence_number": self._sequence, **data}
        self._sequence += 1
        self.frames.append(f"event: {kind}\ndata: {json.dumps(body)}\n\n")

    def response(self, status: str, output: list[dict[str, Any]], usage: Any) -> dict[str, Any]:
        return {
            "id": self.response_id,
            "object": "response",
            "created_at": int(time.time()),
            "status": status,
            "model": "gpt-test",
            "output": output,
            "usage": usage,
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
        }


def responses_stream(
    *texts: str,
    calls: Sequence[tuple[str, str, list[str]]] = (),
    custom_calls: Sequence[tuple[str, str, str]] = (),
    usage: tuple[int, int] = (100, 20),
    response_id: str = "resp_1",
    summary: Sequence[Sequence[str]] = (),
    encrypted: str | None = None,
    reasoning_tokens: int = 0,
    cached: int = 0,
    incomplete: bool = False,
) -> list[str]:
    """A whole response: a reasoning item when ``summary`` (its parts, each as delta
    pieces) or ``encrypted`` (its ``encrypted_content``) is given, a message of ``texts``
    (each one delta), then function calls (call id, name, argument pieces) and custom tool
    calls (call id, name, input). ``incomplete``: stopped at ``max_output_tokens``."""
    events = _Events(response_id)
    events.add("response.created", response=events.response("in_progress", [], None))
    output: list[dict[str, Any]] = []
    if summary or encrypted is not None:
        output.append(_reasoning(events, f"rs_{response_id}", summary, encrypted))
    if texts:
        index, item_id = len(output), f"msg_{response_id}"
        item = {"id": item_id, "type": "message", "role": "assistant", "status": "in_progress"}
        events.add("response.output_item.added", output_index=index, item={**item, "content": []})
        part = {"type": "output_text", "text": "", "annotations": []}
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        events.add("response.content_part.added", **where, part=part)
        for text in texts:
            events.add("response.output_text.delta", **where, delta=text, logprobs=[])
        full = "".join(texts)
        events.add("response.output_text.done", **where, text=full, logprobs=[])
        events.add("response.content_part.done", **where, part={**part, "text": full})
        done = {**item, "status": "completed", "content": [{**part, "text": full}]}
        events.add("response.output_item.done", output_index=index, item=done)
        output.append(done)
    for call_id, name, pieces in calls:
        index, item_id = len(output), f"fc_{call_id}"
        item = {"id": item_id, "type": "function_call", "call_id": call_id, "name": name}
        events.add(
            "response.output_item.added",
            output_index=index,
            item={**item, "arguments": "", "status": "in_progress"},
        )
        for piece in pieces:
            events.add(
                "response.function_call_arguments.delta",
                item_id=item_id,
                output_index=index,
                delta=piece,
            )
        arguments = "".join(pieces)
        events.add(
            "response.function_call_arguments.done",
            item_id=item_id,
            output_index=index,
            arguments=arguments,
        )
        done = {**item, "arguments": arguments, "status": "completed"}
        events.add("response.output_item.done", output_index=index, item=done)
        output.append(done)
    for call_id, name, text in custom_calls:
        index, item_id = len(output), f"ctc_{call_id}"
        item = {"id": item_id, "type": "custom_tool_call", "call_id": call_id, "name": name}
        events.add("response.output_item.added", output_index=index, item={**item, "input": ""})
        events.add(
            "response.custom_tool_call_input.delta", item_id=item_id, output_index=index, delta=text
        )
        events.add(
            "response.custom_tool_call_input.done", item_id=item_id, output_index=index, input=text
        )
        done = {**item, "input": text}
        events.add("response.output_item.done", output_index=index, item=done)
        output.append(done)
    tokens = {
        "input_tokens": usage[0],
        "input_tokens_details": {"cached_tokens": cached, "cache_write_tokens": 0},
        "output_tokens": usage[1],
        "output_tokens_details": {"reasoning_tokens": reasoning_tokens},
        "total_tokens": sum(usage),
    }
    if incomplete:
        response = events.response("incomplete", output, tokens)
        response["incomplete_details"] = {"reason": "max_output_tokens"}
        events.add("response.incomplete", response=response)
    else:
        events.add("response.completed", response=events.response("completed", output, tokens))
    return events.frames


def _reasoning(
    events: _Events, item_id: str, summary: Sequence[Sequence[str]], encrypted: str | None
) -> dict[str, Any]:
    """A reasoning item at output index 0: its summary parts streamed, then the item done
    with its ``encrypted_content`` (``null`` while in progress, as the API sends it)."""
    item = {"id": item_id, "type": "reasoning", "summary": [], "encrypted_content": None}
    events.add("response.output_item.added", output_index=0, item=item)
    parts: list[dict[str, str]] = []
    for index, pieces in enumerate(summary):
        where = {"item_id": item_id, "output_index": 0, "summary_index": index}
        empty = {"type": "summary_text", "text": ""}
        events.add("response.reasoning_summary_part.added", **where, part=empty)
        for piece in pieces:
            events.add("response.reasoning_summary_text.delta", **where, delta=piece)
        text = "".join(pieces)
        events.add("response.reasoning_summary_text.done", **where, text=text)
        events.add("response.reasoning_summary_part.done", **where, part={**empty, "text": text})
        parts.append({"type": "summary_text", "text": text})
    done = {**item, "summary": parts, "encrypted_content": encrypted}
    events.add("response.output_item.done", output_index=0, item=done)
    return done


def responses_failed(message: str, code: str = "server_error") -> list[str]:
    """A stream that fails after it started: ``response.created``, then ``response.failed``
    with the error."""
    events = _Events("resp_failed")
    events.add("response.created", response=events.response("in_progress", [], None))
    failed = events.response("failed", [], None)
    failed["error"] = {"code": code, "message": message}
    events.add("response.failed", response=failed)
    return events.frames


def tool_outputs(body: dict[str, Any]) -> int:
    """How many tool results a recorded Responses request sends back to the model."""
    kinds = ("function_call_output", "custom_tool_call_output")
    return sum(1 for item in body.get("input", []) if item.get("type") in kinds)
