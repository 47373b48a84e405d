"""Render a run's events in a terminal: step headers, streamed text, tools, outcome."""

from __future__ import annotations

import json
import sys
from typing import Any

from tether_protocol import (
    ApprovalEvent,
    AssistantEvent,
    RunEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StepEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageEvent,
)

from ..textmodel import split_lines
from .terminal import TextOut

HEAD_LINES = 4
TAIL_LINES = 6


class TerminalRenderer:
    """Writes events as they arrive; colours only when the output is a terminal."""

    def __init__(self, out: TextOut | None = None, color: bool | None = None) -> None:
        self.out: TextOut = out or sys.stdout
        self.color = self.out.isatty() if color is None else color
        self._mid_line = False
        self.usage: UsageEvent | None = None

    def _style(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.color else text

    def _line(self, text: str = "") -> None:
        if self._mid_line:
            self.out.write("\n")
            self._mid_line = False
        self.out.write(text + "\n")
        self.out.flush()

    def __call__(self, event: RunEvent) -> None:
        self.render(event)

    def render(self, event: RunEvent) -> None:
        """Show one event."""
        if isinstance(event, RunStartedEvent):
            self._line(self._style(f"▶ {event.prompt}", "1"))
        elif isinstance(event, StepEvent):
            self._line(self._style(f"── step {event.step} " + "─" * 40, "2"))
        elif isinstance(event, TextDeltaEvent):
            self.out.write(event.text)
            self.out.flush()
            self._mid_line = not event.text.endswith("\n")
        elif isinstance(event, AssistantEvent):
            if self._mid_line:
                self.out.write("\n")
                self._mid_line = False
        elif isinstance(event, ToolCallEvent):
            self._line(self._style(f"→ {event.tool} {_arguments(event.arguments)}", "36"))
        elif isinstance(event, ApprovalEvent):
            self._line(self._style(f"  approval: {event.decision}", "33"))
        elif isinstance(event, ToolResultEvent):
            self._tool_result(event)
        elif isinstance(event, UsageEvent):
            self.usage = event
        elif isinstance(event, RunFinishedEvent):
            self._line()

    def _tool_result(self, event: ToolResultEvent) -> None:
        mark = self._style("✓", "32") if event.ok else self._style("✗", "31")
        lines = split_lines(event.output) or [""]  # lines as the editor cuts them
        self._line(f"{mark} {event.tool}: {lines[0]}")
        rest = lines[1:]
        if len(rest) > HEAD_LINES + TAIL_LINES:  # the end of an output matters most (tests)
            cut = len(rest) - HEAD_LINES - TAIL_LINES
            rest = [*rest[:HEAD_LINES], f"… {cut} more lines …", *rest[-TAIL_LINES:]]
        for line in rest:
            self._line(self._style(f"  {line}", "2"))

    def summary(self, result: dict[str, Any]) -> None:
        """The final answer and outcome of a run."""
        usage = result.get("usage", {})
        self._line(self._style("Answer:", "1"))
        self._line(result.get("answer") or "(no answer)")
        detail = (
            f"outcome {result['outcome']} · {result['steps']} steps · "
            f"{usage.get('inputTokens', 0)} in / {usage.get('outputTokens', 0)} out tokens"
        )
        if usage.get("costUsd") is not None:
            detail += f" · ${usage['costUsd']:.4f}"
        if result.get("sessionId"):
            detail += f" · session {result['sessionId']} · run {result.get('runId')}"
        if result.get("error"):
            detail += f" · error: {result['error']}"
        self._line(self._style(detail, "2" if result["outcome"] == "done" else "31"))


def _arguments(arguments: dict[str, Any]) -> str:
    text = json.dumps(arguments, ensure_ascii=False)
    return text if len(text) <= 120 else text[:117] + "…"
