"""``tether replay``: show a stored session again, or re-run it through today's harness.

``--rerun`` turns each run's logged model replies into a script for the scripted provider
and plays the runs again, in order and in one session, through a fresh ``tether serve`` on
a folder you choose; then it reports every difference in tool calls and outcomes. That is
how two versions of the harness are compared on a real trace.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tether_protocol import (
    RunEvent,
    RunFinishedEvent,
    RunStartedEvent,
    ToolCallEvent,
    ToolResultEvent,
    parse_event,
)

from ..providers.base import AssistantMessage, Message
from ..session.records import SessionData
from .approver import TerminalApprover
from .headless import connect
from .render import TerminalRenderer, plural


@dataclass(frozen=True, slots=True)
class LoggedRun:
    """One run of a stored session: its prompt, model replies, tool calls and outcome."""

    run_id: str
    prompt: str
    replies: list[AssistantMessage]
    calls: list[tuple[str, str]]
    """Each tool call: name and canonical JSON arguments, with ``ok`` of its result appended."""
    outcome: str | None


def runs_of(data: SessionData) -> list[LoggedRun]:
    """The runs of a session, in order."""
    by_run: dict[str, list[RunEvent]] = {}
    for raw in data.events:
        event = parse_event(raw)
        by_run.setdefault(event.run_id, []).append(event)
    runs: list[LoggedRun] = []
    for run_id, events in by_run.items():
        started = next((e for e in events if isinstance(e, RunStartedEvent)), None)
        if started is None:
            continue  # a torn log may have lost a run's first line
        finished = next((e for e in events if isinstance(e, RunFinishedEvent)), None)
        messages: list[Message] = data.run_messages.get(run_id, [])
        replies = [m for m in messages if isinstance(m, AssistantMessage)]
        outcome = finished.outcome if finished else None
        runs.append(LoggedRun(run_id, started.prompt, replies, call_trace(events), outcome))
    return runs


def call_trace(events: Iterable[RunEvent]) -> list[tuple[str, str]]:
    """Each tool call of a run: its name, and its canonical arguments with the result's success."""
    calls: list[tuple[str, str]] = []
    for event in events:
        if isinstance(event, ToolCallEvent):
            calls.append(_call(event.tool, event.arguments))
        elif isinstance(event, ToolResultEvent):
            _mark(calls, event.ok)
    return calls


def _call(tool: str, arguments: Any) -> tuple[str, str]:
    return tool, json.dumps(arguments, sort_keys=True)


def _mark(calls: list[tuple[str, str]], ok: bool) -> None:
    """Note the result of the last call: a call that now fails is a difference too."""
    if calls:
        tool, arguments = calls[-1]
        calls[-1] = (tool, f"{arguments} → {'ok' if ok else 'failed'}")


def script_for(run: LoggedRun) -> dict[str, Any]:
    """The scripted-provider script that replays a run's model replies."""
    turns = [
        {
            "text": reply.text,
            "toolCalls": [{"name": c.name, "arguments": c.arguments} for c in reply.tool_calls],
        }
        for reply in run.replies
    ]
    return {"turns": turns}


def show(data: SessionData, renderer: TerminalRenderer) -> None:
    """Render the stored events in the terminal, each run closed by its outcome."""
    for raw in data.events:
        event = parse_event(raw)
        renderer.render(event)
        if isinstance(event, RunFinishedEvent):
            line = f"[{event.run_id}] outcome {event.outcome} · {plural(event.steps, 'step')}"
            if error := data.errors.get(event.run_id):
                line += f" · error: {error}"
            renderer._line(renderer._style(line, "2" if event.outcome == "done" else "31"))


def uses_absolute_paths(data: SessionData) -> bool:
    """Whether any logged tool call names an absolute path."""
    return any('"/' in arguments for run in runs_of(data) for _, arguments in run.calls)


def relocate(value: Any, origin: Path, target: Path) -> Any:
    """``value`` with absolute paths inside ``origin`` moved to the same place in ``target``
    (a model that used absolute paths would otherwise reach the original folder)."""
    if isinstance(value, str):
        prefix = str(origin)
        if value == prefix or value.startswith(prefix + "/"):
            return str(target) + value[len(prefix) :]
        return value
    if isinstance(value, list):
        return [relocate(v, origin, target) for v in value]
    if isinstance(value, dict):
        return {k: relocate(v, origin, target) for k, v in value.items()}
    return value


def relocated(run: LoggedRun, origin: Path, target: Path) -> LoggedRun:
    """A logged run as if it had happened in ``target`` instead of ``origin``."""
    replies = [
        AssistantMessage(
            reply.text,
            tuple(
                replace(c, arguments=relocate(c.arguments, origin, target))
                for c in reply.tool_calls
            ),
        )
        for reply in run.replies
    ]
    # The logged calls are canonical JSON: move the quoted paths that start in ``origin``.
    was = re.compile(re.escape(json.dumps(str(origin))[:-1]) + r'(?=[/"])')
    now = json.dumps(str(target))[:-1]
    calls = [(tool, was.sub(lambda _: now, arguments)) for tool, arguments in run.calls]
    return LoggedRun(run.run_id, run.prompt, replies, calls, run.outcome)


def differences(logged: LoggedRun, calls: list[tuple[str, str]], outcome: str) -> list[str]:
    """What the re-run did differently from the log."""
    found = []
    for index in range(max(len(logged.calls), len(calls))):
        was = logged.calls[index] if index < len(logged.calls) else None
        now = calls[index] if index < len(calls) else None
        if was != now:
            found.append(f"call {index + 1}: logged {_fmt(was)}, re-run {_fmt(now)}")
    if logged.outcome != outcome:
        found.append(f"outcome: logged {logged.outcome}, re-run {outcome}")
    return found


def _fmt(call: tuple[str, str] | None) -> str:
    return "nothing" if call is None else f"{call[0]} {call[1]}"


async def rerun(
    data: SessionData,
    cwd: Path,
    yes: bool,
    renderer: TerminalRenderer,
    origin: Path | None = None,
) -> int:
    """Play the session's runs again; the number of differences found.

    With ``origin`` (the folder the session ran in), absolute paths into it are mapped to
    ``cwd``; without it, absolute paths in the model's calls still point where they did.
    """
    runs = runs_of(data)
    if origin is not None and origin != cwd:
        runs = [relocated(run, origin, cwd) for run in runs]
    total = 0
    approver = TerminalApprover(yes=yes, out=renderer.out, color=renderer.color, hold=renderer.hold)
    options = {"provider": "scripted", "script": script_for(runs[0]) if runs else {"turns": []}}
    async with connect(cwd, options, approver=approver) as client:
        session_id: str | None = None
        for run in runs:
            await client.notify(
                "workspace/didChangeConfiguration",
                {"settings": {"tether": {"script": script_for(run)}}},
            )
            events: list[RunEvent] = []

            def collect(event: RunEvent, events: list[RunEvent] = events) -> None:
                events.append(event)
                renderer.render(event)

            client.on_event = collect
            extra = {"sessionId": session_id} if session_id else {}
            result = await client.run(run.prompt, **extra)
            session_id = result["sessionId"]
            found = differences(run, call_trace(events), result["outcome"])
            total += len(found)
            verdict = "same tool calls and outcome" if not found else "; ".join(found)
            renderer._line(f"[{run.run_id}] {verdict}")
    return total
