"""Tether's run events as ACP ``session/update`` notifications.

One mapping for both directions of time: ``AcpSink`` sends a running prompt's events as
they happen, and ``replayed`` turns a stored session's events into the same updates for
``session/load``. The updates are plain dicts in the wire's camelCase (checked against
the official schema by the tests). What they show a person of text Tether did not write — the
model's text, a call's title and input, a tool's output, a plan — is shown as such
(``text.display``): no control or bidi character of theirs reaches the editor raw.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether_protocol import (
    ApprovalEvent,
    AssistantEvent,
    PlanEvent,
    RunEvent,
    RunStartedEvent,
    StepEvent,
    TextDeltaEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolProgressEvent,
    ToolResultEvent,
    UsageEvent,
)

from ..errors import ToolError
from ..text.display import shown, shown_value
from ..tools.registry import ToolRegistry
from ..workspace.folders import Workspace

RESULT_CHARS = 64 * 1024
"""Characters of a tool's output shown in its ``tool_call_update`` (the model sees all)."""

Notify = Callable[[dict[str, Any]], None]
"""Sends one ``update`` object of the session (the sink adds the session id)."""


def tool_call_id(run_id: str, call_id: str) -> str:
    """The ACP id of a call: the model's ids repeat across runs (``call_1_1``), a session's
    tool calls must not."""
    return f"{run_id}/{call_id}"


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": shown(text, lines=True)}


def locations(arguments: dict[str, Any], workspace: Workspace | None) -> list[dict[str, Any]]:
    """The absolute path a call is about (the editor follows the agent there)."""
    path = arguments.get("path")
    if workspace is None or not isinstance(path, str) or not path:
        return []
    try:
        resolved = workspace.resolve(path)
    except ToolError:
        return []
    location: dict[str, Any] = {"path": str(resolved)}
    offset = arguments.get("offset")
    if isinstance(offset, int) and not isinstance(offset, bool) and offset >= 1:
        location["line"] = offset
    return [location]


@dataclass(frozen=True, slots=True)
class DiffShown:
    """A file change as ACP shows it: absolute path, whole old text (None: a new file)
    and whole new text."""

    path: Path
    old_text: str | None
    new_text: str

    def to_wire(self) -> dict[str, Any]:
        return {
            "type": "diff",
            "path": str(self.path),
            "oldText": self.old_text,
            "newText": self.new_text,
        }


@dataclass(slots=True)
class Translator:
    """Turns a session's events into ACP updates; keeps what a call's later updates need."""

    workspace: Workspace | None
    tools: ToolRegistry | None = None
    """The built-in tools: each says its calls' kind and title (another tool's: ``other``
    and its label or name)."""
    context_size: int = 0
    """The model's context window in tokens (``usage_update.size``)."""
    cost_before: float = 0.0
    """What the session's earlier runs cost (``usage_update.cost`` is the session's)."""
    _run_cost: float = 0.0
    diffs: dict[str, DiffShown] = field(default_factory=dict)
    """The change each edit call made (or proposed), by call id."""
    calls: dict[str, str] = field(default_factory=dict)
    """Each call's tool, by call id."""
    current_call: str | None = None
    """The call running now (calls of one run are sequential)."""
    shown_so_far: dict[str, str] = field(default_factory=dict)
    """The output so far each running call last showed, by call id (until its result)."""
    waiting: tuple[str, str] | None = None
    """Tether's own wait shown as a tool call (the progress of no call of the model: a
    session's MCP servers starting): its id and title, until the run's next lasting event."""
    _message_id: str | None = None
    _last_input: int = 0
    _last_output: int = 0

    def presented(self, tool: str, arguments: dict[str, Any]) -> tuple[str, str]:
        """A call's ACP kind and title, as its tool says them."""
        if self.tools is None:
            return "other", tool
        return self.tools.presented(tool, arguments)

    def updates(self, event: RunEvent, *, replay: bool = False) -> Iterator[dict[str, Any]]:
        if self.waiting is not None and not isinstance(event, ToolProgressEvent):
            yield {
                "sessionUpdate": "tool_call_update",
                "toolCallId": self.waiting[0],
                "status": "completed",
            }
            self.waiting = None
        if isinstance(event, TextDeltaEvent):
            if not replay and event.text:
                yield self._chunk("agent_message_chunk", event.text)
        elif isinstance(event, ThinkingEvent):
            if event.text:  # the model's reasoning, never the answer: live and replayed
                yield {"sessionUpdate": "agent_thought_chunk", "content": _text(event.text)}
        elif isinstance(event, AssistantEvent):
            if replay and event.text:
                yield self._chunk("agent_message_chunk", event.text)
            self._message_id = None
        elif isinstance(event, StepEvent):
            self._message_id = None
        elif isinstance(event, RunStartedEvent):
            if not replay:  # the last run's cost joins the session's
                self.cost_before += self._run_cost
                self._run_cost = 0.0
            self._last_input = self._last_output = 0
            self.shown_so_far.clear()  # a cancelled call's never got its result
            if replay:
                yield {"sessionUpdate": "user_message_chunk", "content": _text(event.prompt)}
        elif isinstance(event, ToolCallEvent):
            yield self._tool_call(event)
        elif isinstance(event, ApprovalEvent):
            if event.decision in ("allow", "allow-always", "auto") and not replay:
                yield {
                    "sessionUpdate": "tool_call_update",
                    "toolCallId": tool_call_id(event.run_id, event.call_id),
                    "status": "in_progress",
                }
        elif isinstance(event, ToolProgressEvent):
            if not replay:
                yield from self._so_far(event)
        elif isinstance(event, ToolResultEvent):
            yield self._tool_result(event)
        elif isinstance(event, UsageEvent):
            if not replay:
                yield self._usage(event)
        elif isinstance(event, PlanEvent):
            yield {
                "sessionUpdate": "plan",
                "entries": [
                    {"content": shown(e.content), "priority": e.priority, "status": e.status}
                    for e in event.entries
                ],
            }

    def _chunk(self, kind: str, text: str) -> dict[str, Any]:
        if self._message_id is None:
            self._message_id = str(uuid.uuid4())
        return {"sessionUpdate": kind, "content": _text(text), "messageId": self._message_id}

    def _tool_call(self, event: ToolCallEvent) -> dict[str, Any]:
        call = tool_call_id(event.run_id, event.call_id)
        self.calls[call] = event.tool
        self.current_call = call
        self._message_id = None
        kind, title = self.presented(event.tool, event.arguments)
        return {
            "sessionUpdate": "tool_call",
            "toolCallId": call,
            "title": shown(event.label or title),
            "kind": kind,
            "status": "pending",
            "locations": locations(event.arguments, self.workspace),
            "rawInput": shown_value(event.arguments),
        }

    def _so_far(self, event: ToolProgressEvent) -> Iterator[dict[str, Any]]:
        """A running command's output so far, as the call's content, when it changed (a
        report that only counts the time shows nothing new here)."""
        call = tool_call_id(event.run_id, event.call_id)
        if call not in self.calls:  # no call of the model's: Tether's own wait
            yield from self._wait(call, shown(event.last_line))
            return
        if not event.tail or self.shown_so_far.get(call) == event.tail:
            return
        self.shown_so_far[call] = event.tail
        yield {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call,
            "status": "in_progress",
            "content": [{"type": "content", "content": _text(event.tail)}],
        }

    def _wait(self, call: str, title: str) -> Iterator[dict[str, Any]]:
        """Tether's wait as a tool call of its own, titled by what it waits for (a new
        title when that changes), completed at the run's next lasting event."""
        if self.waiting is None or self.waiting[0] != call:
            self.waiting = (call, title)
            yield {
                "sessionUpdate": "tool_call",
                "toolCallId": call,
                "title": title,
                "kind": "other",
                "status": "in_progress",
            }
        elif self.waiting[1] != title:
            self.waiting = (call, title)
            yield {"sessionUpdate": "tool_call_update", "toolCallId": call, "title": title}

    def _tool_result(self, event: ToolResultEvent) -> dict[str, Any]:
        call = tool_call_id(event.run_id, event.call_id)
        self.shown_so_far.pop(call, None)
        if self.current_call == call:
            self.current_call = None
        output = event.output
        if len(output) > RESULT_CHARS:
            output = output[:RESULT_CHARS] + "\n… (cut)"
        content: list[dict[str, Any]] = []
        diff = self.diffs.pop(call, None)
        if diff is not None and event.ok:
            content.append(diff.to_wire())
        if output:
            content.append({"type": "content", "content": _text(output)})
        raw: dict[str, Any] = {"ok": event.ok, "output": shown(output, lines=True)}
        if event.error:
            raw["error"] = shown(event.error, lines=True)
        return {
            "sessionUpdate": "tool_call_update",
            "toolCallId": call,
            "status": "completed" if event.ok else "failed",
            "content": content,
            "rawOutput": raw,
        }

    def _usage(self, event: UsageEvent) -> dict[str, Any]:
        # The event is cumulative for the run; the last step's input is what the context
        # holds now (its whole conversation), plus the reply it wrote.
        step_input = max(0, event.input_tokens - self._last_input)
        step_output = max(0, event.output_tokens - self._last_output)
        self._last_input, self._last_output = event.input_tokens, event.output_tokens
        update: dict[str, Any] = {
            "sessionUpdate": "usage_update",
            "used": int(step_input + step_output),
            "size": int(max(self.context_size, 0)),
        }
        if event.cost_usd is not None:
            self._run_cost = float(event.cost_usd)  # cumulative for the run
            amount = self.cost_before + self._run_cost
            update["cost"] = {"amount": amount, "currency": "USD"}
        return update


class AcpSink:
    """An ``EventSink`` sending a run's events as ``session/update`` notifications."""

    def __init__(self, translator: Translator, send: Notify) -> None:
        self.translator = translator
        self._send = send

    def publish(self, event: RunEvent) -> None:
        for update in self.translator.updates(event):
            self._send(update)


def replayed(events: Sequence[RunEvent], translator: Translator) -> list[dict[str, Any]]:
    """A stored session's events as the updates ``session/load`` replays: the user's
    prompts, the agent's answers, every tool call with its final status, the plans."""
    found: list[dict[str, Any]] = []
    for event in events:
        found.extend(translator.updates(event, replay=True))
    return found
