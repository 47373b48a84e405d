"""For LSP clients with no Tether plugin (Eglot, vim-lsp, coc.nvim, Helix, Kakoune):
``tether.run`` arguments as those editors send them, and the run told through
``window/showMessage`` and ``window/logMessage`` since nothing shows ``agent/event``."""

from __future__ import annotations

import json
from concurrent.futures import Future
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams, JsonRpcMethodNotFound

from tether_protocol import (
    ApprovalEvent,
    AssistantEvent,
    PlanEvent,
    RunEvent,
    RunFinishedEvent,
    RunResult,
    RunStartedEvent,
    ToolCallEvent,
    ToolResultEvent,
)

from ..text.display import shown
from .link import ClientLink

HOW_TO_PASS_A_PROMPT = (
    "tether.run needs a prompt as its argument, e.g. `:CocCommand tether.run fix the bug` "
    '(coc.nvim), `:lsp-workspace-command tether.run "fix the bug"` (Helix), '
    '`(eglot-execute-command server "tether.run" ["fix the bug"])` (Emacs), '
    'or an object {"prompt": "fix the bug"}'
)

LOG_LINE_CHARS = 400
"""The longest ``window/logMessage`` line of a transcript (the rest is cut, marked)."""
LOG_LINES_PER_RUN = 200
"""The most transcript lines one run sends; then one line says the rest is in the log."""
SUMMARY_CHARS = 160
"""The longest first line of the answer in the end-of-run message."""

APPROVALS_UNSUPPORTED = (
    "Tether: this editor cannot show approval prompts (window/showMessageRequest is not "
    "supported), so every edit and command that needs approval is denied. Options: list "
    'the tools to allow in the `autoApprove` setting (e.g. ["edit_file", "write_file"]), '
    "use an editor with a Tether plugin, or a newer editor version (Helix after 25.07 asks)."
)

OUTCOME_TYPES = {"done": types.MessageType.Info, "error": types.MessageType.Error}
"""The message type of each outcome; Warning for the others (the run stopped early)."""


def run_params_from_arguments(arguments: list[Any], recent_uri: str | None) -> dict[str, Any]:
    """``tether.run``'s arguments as ``agent/run`` params: one object (``RunParams``), or
    strings joined by spaces as the prompt. Without a ``context``, the most recently changed
    open document (``recent_uri``) is the run's context."""
    if len(arguments) == 1 and isinstance(arguments[0], dict):
        params = dict(arguments[0])
    elif arguments and all(isinstance(a, str) for a in arguments):
        prompt = " ".join(a.strip() for a in arguments).strip()
        if not prompt:
            raise JsonRpcInvalidParams(f"the prompt is empty: {HOW_TO_PASS_A_PROMPT}")
        params = {"prompt": prompt}
    elif not arguments:
        raise JsonRpcInvalidParams(f"no prompt: {HOW_TO_PASS_A_PROMPT}")
    else:
        got = ", ".join(type(a).__name__ for a in arguments)
        raise JsonRpcInvalidParams(
            f"arguments must be strings (the prompt) or one object, not ({got}): "
            f"{HOW_TO_PASS_A_PROMPT}"
        )
    if params.get("context") is None and recent_uri is not None:
        params["context"] = {"uri": recent_uri}
    return params


def answered_method_not_found(answer: Future[Any]) -> bool:
    """The client answered a request with ``-32601``: it does not have that method."""
    if answer.cancelled():
        return False
    error = answer.exception()
    return isinstance(error, JsonRpcException) and error.code == JsonRpcMethodNotFound.CODE


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, marked when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def first_line(text: str) -> str:
    """The first non-blank line of ``text`` (stripped), or ``""``."""
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def outcome_message(result: RunResult) -> types.ShowMessageParams:
    """``Tether done · 3 steps · <first line of the answer>`` (the error when it failed)."""
    steps = f"{result.steps} step" + ("" if result.steps == 1 else "s")
    parts = [f"Tether {result.outcome}", steps]
    said = first_line(result.error or "") if result.outcome == "error" else ""
    said = said or first_line(result.answer)
    if said:
        parts.append(shown(clip(said, SUMMARY_CHARS)))
    kind = OUTCOME_TYPES.get(result.outcome, types.MessageType.Warning)
    return types.ShowMessageParams(type=kind, message=" · ".join(parts))


def call_target(arguments: dict[str, Any]) -> str:
    """What a tool call is about, for one line: its path, pattern or command."""
    for key in ("path", "pattern", "command"):
        value = arguments.get(key)
        if isinstance(value, str) and value:
            return value
    return json.dumps(arguments, ensure_ascii=False) if arguments else ""


def transcript_line(event: RunEvent) -> str | None:
    """One event as a transcript line; None for events not worth a line (deltas, usage)."""
    if isinstance(event, RunStartedEvent):
        return f"run {event.run_id} started: {first_line(event.prompt)}"
    if isinstance(event, AssistantEvent):
        return f"assistant: {event.text.strip()}" if event.text.strip() else None
    if isinstance(event, ToolCallEvent):
        return f"→ {event.label or event.tool} {call_target(event.arguments)}".rstrip()
    if isinstance(event, ApprovalEvent):
        return None if event.decision == "auto" else f"  approval: {event.decision}"
    if isinstance(event, ToolResultEvent):
        mark, said = ("✓", event.output) if event.ok else ("✗", event.error or event.output)
        head = first_line(said)
        return f"  {mark} {event.label or event.tool}" + (f": {head}" if head else "")
    if isinstance(event, PlanEvent):
        marks = {"completed": "✓", "in_progress": "▸", "pending": "○"}
        return "  plan: " + " · ".join(f"{marks[e.status]} {e.content}" for e in event.entries)
    if isinstance(event, RunFinishedEvent):
        return f"run {event.run_id} {event.outcome} after {event.steps} steps"
    return None


class TranscriptSink:
    """A run's transcript as ``window/logMessage`` lines (Eglot's events buffer, coc's
    output channel, Helix's log), bounded per line and per run."""

    def __init__(self, link: ClientLink) -> None:
        self._link = link
        self._sent = 0
        self._dropped = 0

    def publish(self, event: RunEvent) -> None:
        line = transcript_line(event)
        if line is None:
            return
        finished = isinstance(event, RunFinishedEvent)
        if self._sent >= LOG_LINES_PER_RUN - 2 and not finished:
            self._dropped += 1  # two lines are kept: how many were cut, and the outcome
            return
        if finished and self._dropped:
            self._log(
                f"… {self._dropped} transcript lines not shown (the session log has them all)"
            )
        self._log(line)

    def _log(self, line: str) -> None:
        self._sent += 1
        self._link.send_notification(
            types.WINDOW_LOG_MESSAGE,
            types.LogMessageParams(
                type=types.MessageType.Info,
                message=f"[tether] {shown(clip(line, LOG_LINE_CHARS), lines=True)}",
            ),
        )
