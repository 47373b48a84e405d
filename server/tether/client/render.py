"""Render a run's events in a terminal: step headers, streamed text, tools, outcome."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

import anyio

from tether_protocol import (
    ApprovalEvent,
    AssistantEvent,
    PlanEvent,
    RetryEvent,
    RunEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StepEvent,
    TextDeltaEvent,
    ThinkingEvent,
    ToolCallEvent,
    ToolProgressEvent,
    ToolResultEvent,
    UsageEvent,
)

from ..text.counts import plural as plural  # replay.py says its counts with it
from ..text.display import shown
from ..text.model import split_lines
from .terminal import TextOut

DiffPrinter = Callable[[str, str], None]
"""Shows an approval's diff (the diff, the file's URI)."""

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
THOUGHT_KEPT = 1_000
"""How much of the end of the model's thinking the spinner keeps to show its last words."""
HEAD_LINES = 4
TAIL_LINES = 6


def styled_terminal(out: TextOut, environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``out`` gets colours and styling: a terminal, unless the user asked for none
    (``NO_COLOR``, https://no-color.org) or the terminal cannot show them (``TERM=dumb``)."""
    env = os.environ if environ is None else environ
    return out.isatty() and not env.get("NO_COLOR") and env.get("TERM") != "dumb"


class TerminalRenderer:
    """Writes events as they arrive; colours only when the output is a terminal."""

    def __init__(self, out: TextOut | None = None, color: bool | None = None) -> None:
        self.out: TextOut = out or sys.stdout
        if color is None:
            color = styled_terminal(self.out)
        self.color = color
        self._mid_line = False
        self.usage: UsageEvent | None = None
        self.echo_prompt = True
        """Whether a run starts with its prompt (not in the chat: it is on the screen)."""
        self.streamed = ""
        """The assistant text streamed since the run started (what the screen shows)."""
        self._thinking_since: float | None = None
        """When the model was asked and has not answered yet (the spinner shows then)."""
        self._running: tuple[float, ToolProgressEvent] | None = None
        """A command that runs, by its last report and when that came (its status line
        shows then, under its call, until the next event)."""
        self._spinner_shown = False
        self._held = False
        """The user is being asked (an approval, a question): nothing redraws over the prompt."""
        self._thought = ""
        """The end of what the model thought since its step began (never the answer): the
        spinner's line shows its last words."""

    def diff_printer(self) -> DiffPrinter | None:
        """How approvals should show diffs (None: as coloured text, ``colour_diff``)."""
        return None

    def others_wrote(self) -> None:
        """Something else was written to the terminal (Ctrl-C's notice); plain output
        takes nothing back, so it needs to know nothing."""

    def _clear_spinner(self) -> None:
        if self._spinner_shown:
            self.out.write("\r\x1b[K")
            self._spinner_shown = False

    def hold(self, held: bool) -> None:
        """While the user is asked (an approval, a command's question), the spinner and a
        running command's status line stay off the screen: redrawn, they would cover the
        prompt and what is typed at it."""
        if held:
            self._clear_spinner()
            self.out.flush()
        self._held = held

    def tick(self) -> None:
        """Redraw the spinner while the model thinks, or a running command's status line
        (only on a colour terminal, and not while the user is asked)."""
        if self._mid_line or not self.color or self._held:
            return
        if self._running is not None:
            since, report = self._running
            elapsed = report.elapsed_ms / 1000 + time.monotonic() - since
            text = running_text(report, elapsed, SPINNER[int(elapsed * 10) % len(SPINNER)])
            text = fit(text, shutil.get_terminal_size((100, 24)).columns - 1)
        elif self._thinking_since is not None:
            elapsed = time.monotonic() - self._thinking_since
            frame = SPINNER[int(elapsed * 10) % len(SPINNER)]
            text = f"{frame} thinking {elapsed:.1f}s"
            if self._thought.strip():
                columns = shutil.get_terminal_size((100, 24)).columns - 1
                text = thinking_text(text, self._thought, columns)
        else:
            return
        self.out.write(f"\r\x1b[K{self._style(text, '2')}")
        self.out.flush()
        self._spinner_shown = True

    async def animate(self) -> None:
        """Keep the spinner turning until cancelled."""
        while True:
            await anyio.sleep(0.1)
            self.tick()

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
        event = shown_event(event)
        self._clear_spinner()
        self._running = None  # a command's report holds until the next event
        if isinstance(event, StepEvent | RetryEvent):  # a retry thinks again from the start
            self._thought = ""
        if isinstance(event, StepEvent):
            self._thinking_since = time.monotonic()
        elif isinstance(event, ThinkingEvent):  # shown on the spinner's line, never printed
            self._thinking_since = self._thinking_since or time.monotonic()
            self._thought = (self._thought + event.text)[-THOUGHT_KEPT:]
            self.tick()  # nothing where the output is no terminal
        elif not isinstance(event, (UsageEvent, RetryEvent)):  # still waiting on a retry
            self._thinking_since = None
        if isinstance(event, ToolProgressEvent):
            self._running = (time.monotonic(), event)
            self.tick()  # nothing where the output is no terminal
        elif isinstance(event, RunStartedEvent):
            self.streamed = ""
            self.usage = None  # a run's own usage (cumulative), not the last turn's
            if self.echo_prompt:
                self._line(self._style(f"▶ {event.prompt}", "1"))
        elif isinstance(event, StepEvent):
            self._line(self._style(f"── step {event.step} " + "─" * 40, "2"))
        elif isinstance(event, TextDeltaEvent):
            self.streamed += event.text
            self.out.write(event.text)
            self.out.flush()
            self._mid_line = not event.text.endswith("\n")
        elif isinstance(event, AssistantEvent):
            if self._mid_line:
                self.out.write("\n")
                self._mid_line = False
        elif isinstance(event, ToolCallEvent):
            if event.tool != "plan":  # the plan itself is shown when it is set
                self._tool_call(event)
        elif isinstance(event, ApprovalEvent):
            self._line(self._style(f"  approval: {approval_text(event)}", "33"))
        elif isinstance(event, ToolResultEvent):
            if event.tool != "plan" or not event.ok:
                self._tool_result(event)
        elif isinstance(event, PlanEvent):
            self._plan(event)
        elif isinstance(event, UsageEvent):
            self.usage = event
        elif isinstance(event, RetryEvent):
            self._retry(event)
        elif isinstance(event, RunFinishedEvent):
            self._line()

    def _tool_call(self, event: ToolCallEvent) -> None:
        self._line(
            self._style(f"→ {event.label or event.tool} {_arguments(event.arguments)}", "36")
        )

    def _tool_result(self, event: ToolResultEvent) -> None:
        mark = self._style("✓", "32") if event.ok else self._style("✗", "31")
        first, *rest = shown_output(event.output)
        self._line(f"{mark} {event.label or event.tool}: {first}")
        for line in rest:
            self._line(self._style(f"  {line}", "2"))

    def _retry(self, event: RetryEvent) -> None:
        self._line(self._style(retry_text(event), "2"))

    def _plan(self, event: PlanEvent) -> None:
        done = sum(entry.status == "completed" for entry in event.entries)
        self._line(self._style(f"plan ({done}/{len(event.entries)} done)", "1"))
        for entry in event.entries:
            mark, style = PLAN_MARKS[entry.status]
            self._line(self._style(f"  {mark} {entry.content}", style))

    def summary(self, result: dict[str, Any]) -> None:
        """The final answer and outcome of a run. A run that ended without an answer
        (cancelled, failed) after text had streamed keeps that text as its last word."""
        result = shown_result(result)
        self._clear_spinner()
        self._thinking_since = None
        answer = result.get("answer")
        if answer or (result["outcome"] == "done" and not self.streamed.strip()):
            self._line(self._style("Answer:", "1"))
            self._answer(answer or "(no answer)")
        self._outcome(outcome_line(result), result["outcome"] == "done")

    def finish_turn(self, result: dict[str, Any], seconds: float) -> None:
        """A chat turn's end: the answer unless it streamed, then the one-line footer."""
        result = shown_result(result)
        self._clear_spinner()
        self._thinking_since = None
        answer = result.get("answer")
        if answer and answer.strip() not in self.streamed:
            self._answer(answer)
        self._footer(result, seconds)

    def _footer(self, result: dict[str, Any], seconds: float) -> None:
        footer = footer_line(result, seconds, self.usage)
        self._line(self._style(footer, "2" if ok(result) else "31"))

    def _answer(self, text: str) -> None:
        self._line(text)

    def _outcome(self, detail: str, done: bool) -> None:
        self._line(self._style(detail, "2" if done else "31"))


def shown_event(event: RunEvent) -> RunEvent:
    """``event`` with the strings it carries from outside (the model's text, tools' names,
    labels and outputs, rules, a plan, a retry's reason) as the terminal may show them
    (``text.display``): no escape sequence, carriage return or bidi control of theirs acts.
    A call's arguments are shown as JSON, escaped as one line (``_arguments``)."""
    update: dict[str, Any]
    if isinstance(event, TextDeltaEvent | AssistantEvent | ThinkingEvent):
        update = {"text": shown(event.text, lines=True)}
    elif isinstance(event, RunStartedEvent):
        update = {"prompt": shown(event.prompt, lines=True)}
    elif isinstance(event, ToolCallEvent):
        update = {
            "tool": shown(event.tool),
            "label": None if event.label is None else shown(event.label),
        }
    elif isinstance(event, ToolResultEvent):
        update = {
            "tool": shown(event.tool),
            "label": None if event.label is None else shown(event.label),
            "output": shown(event.output, lines=True),
            "error": None if event.error is None else shown(event.error, lines=True),
        }
    elif isinstance(event, ApprovalEvent) and event.rules:
        rules = [r.model_copy(update={"pattern": shown(r.pattern)}) for r in event.rules]
        update = {"rules": rules}
    elif isinstance(event, PlanEvent):
        entries = [e.model_copy(update={"content": shown(e.content)}) for e in event.entries]
        update = {"entries": entries}
    elif isinstance(event, RetryEvent):
        update = {"reason": shown(event.reason)}
    elif isinstance(event, ToolProgressEvent):
        update = {
            "tool": shown(event.tool),
            "last_line": shown(event.last_line),
            "tail": shown(event.tail, lines=True),
        }
    else:
        return event
    return event.model_copy(update=update)


def shown_result(result: dict[str, Any]) -> dict[str, Any]:
    """A run's result with its answer and error as the terminal may show them."""
    said = {k: shown(result[k], lines=True) for k in ("answer", "error") if result.get(k)}
    return {**result, **said} if said else result


PLAN_MARKS = {"completed": ("✓", "2"), "in_progress": ("▸", "1;33"), "pending": ("○", "0")}
"""How each step of a plan is marked, and its style."""


def approval_text(event: ApprovalEvent) -> str:
    """An approval as a person says it: ``allow``, ``auto (project rule `pytest *`)``,
    ``denied by project rule `rm *``` (not ``denied-by-default``: a rule denied it)."""
    if event.decision == "denied-by-default" and event.rules:
        named = ", ".join(f"{r.scope} rule `{r.pattern}`" for r in event.rules)
        return f"denied by {named}"
    return f"{event.decision}{decided_by(event)}"


def running_text(event: ToolProgressEvent, elapsed: float, frame: str) -> str:
    """A running command's status line: ``  ⠋ 3 s · collected 12 items``."""
    said = f"  {frame} {int(elapsed)} s"
    return f"{said} · {event.last_line}" if event.last_line else said


def thinking_text(spinner: str, thought: str, columns: int) -> str:
    """The spinner's line while the model thinks: ``⠋ thinking 3.1s · …the last words it
    thought``, in ``columns`` cells, its line breaks as spaces; no words when no few fit."""
    words = " ".join(thought.split())
    room = columns - sum(_cells(char) for char in spinner) - len(" · ")
    if room < 12:
        return fit(spinner, columns)
    cells = 0
    for at in range(len(words) - 1, -1, -1):
        cells += _cells(words[at])
        if cells > room - 1:  # the rest does not fit: from its first whole word, after "…"
            tail = words[at + 1 :]
            if words[at] != " " and " " in tail:
                tail = tail.split(" ", 1)[1]
            return f"{spinner} · …{tail}"
    return f"{spinner} · {words}"


def fit(text: str, columns: int) -> str:
    """``text`` cut to ``columns`` terminal cells (wide characters take two), with ``…``:
    a line that wrapped could not be taken back in place."""
    widths = [_cells(char) for char in text]
    if sum(widths) <= columns:
        return text
    cells = 0
    for at, width in enumerate(widths):
        if cells + width > columns - 1:
            return text[:at] + "…"
        cells += width
    return text  # pragma: no cover - the sum says it does not fit


def _cells(char: str) -> int:
    if unicodedata.combining(char):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def retry_text(event: RetryEvent) -> str:
    """A retry as one line: ``↻ HTTP 503 from the model API: overloaded · retry 1 in 1.5s``."""
    reason = " ".join(event.reason.split())  # one line, whatever the API said
    if len(reason) > 160:
        reason = reason[:159] + "…"
    return f"↻ {reason} · retry {event.attempt} in {event.delay_seconds:.1f}s"


def decided_by(event: ApprovalEvent) -> str:
    """What decided an approval, as `` (project rule `pytest *`)`` or `` (in the bwrap
    sandbox)``; else nothing."""
    why = [f"{r.scope} rule `{r.pattern}`" for r in event.rules or []]
    if event.sandbox is not None:  # ran unasked because it ran inside the walls
        why.append(f"in the {event.sandbox} sandbox")
    return f" ({', '.join(why)})" if why else ""


def shown_output(output: str) -> list[str]:
    """A tool's output as shown: its first line, then at most the first and last few."""
    first, *rest = split_lines(output) or [""]  # lines as the editor cuts them
    if len(rest) > HEAD_LINES + TAIL_LINES:  # the end of an output matters most (tests)
        cut = len(rest) - HEAD_LINES - TAIL_LINES
        rest = [
            *rest[:HEAD_LINES],
            f"… {cut} more {'line' if cut == 1 else 'lines'} …",
            *rest[-TAIL_LINES:],
        ]
    return [first, *rest]


def ok(result: dict[str, Any]) -> bool:
    """Whether a run's end is nothing to warn about (done, or stopped by the user)."""
    return result.get("outcome") in ("done", "cancelled")


def footer_line(result: dict[str, Any], seconds: float, known: UsageEvent | None = None) -> str:
    """A chat turn's footer: outcome, steps, tokens, cost, time (and the error). A turn
    that did not finish may end before its model call reports usage: then the tokens are
    the run's last ``known`` usage, or not said (never "0 in / 0 out" after text streamed)."""
    usage = result.get("usage") or {}
    outcome = "interrupted" if result["outcome"] == "cancelled" else result["outcome"]
    parts = [outcome, plural(result.get("steps", 0), "step")]
    if result["outcome"] != "done" and not (usage.get("inputTokens") or usage.get("outputTokens")):
        usage = {} if known is None else known.to_wire()
    if usage:
        parts.append(
            f"{usage.get('inputTokens', 0):,} in / {usage.get('outputTokens', 0):,} out tokens"
        )
    if usage.get("costUsd") is not None:
        parts.append(f"${usage['costUsd']:.4f}")
    parts.append(f"{seconds:.1f}s")
    if result.get("error"):
        parts.append(f"error: {result['error']}")
    return " · ".join(parts)


def outcome_line(result: dict[str, Any]) -> str:
    """The run's outcome, steps, tokens, cost, session and error in one line."""
    usage = result.get("usage", {})
    detail = (
        f"outcome {result['outcome']} · {plural(result['steps'], 'step')} · "
        f"{usage.get('inputTokens', 0)} in / {usage.get('outputTokens', 0)} out tokens"
    )
    if usage.get("costUsd") is not None:
        detail += f" · ${usage['costUsd']:.4f}"
    if result.get("sessionId"):
        detail += f" · session {result['sessionId']} · run {result.get('runId')}"
    if result.get("error"):
        detail += f" · error: {result['error']}"
    return detail


def _arguments(arguments: dict[str, Any]) -> str:
    text = shown(json.dumps(arguments, ensure_ascii=False))
    return text if len(text) <= 120 else text[:117] + "…"
