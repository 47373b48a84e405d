"""What the terminal shows of strings from outside, over generated hostile strings: the
approval question (title, command, folder, offered rules, a diff's file names and lines) and
a run's transcript (prompt, streamed and final text, tool calls and results, plan, retries,
outcome) reach the screen with no control character, carriage return, line separator, bidi
or zero-width character of theirs raw — only the renderer's own colours and cursor moves.
The sanitiser itself: one line (or lines of their own), the same when shown twice, printable
text left as it is, and nothing dropped (the escapes read back to the text)."""

from __future__ import annotations

import io
import re
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.client.approver import TerminalApprover
from tether.client.render import TerminalRenderer
from tether.client.rich_render import RichRenderer
from tether_protocol import (
    ApprovalEvent,
    AssistantEvent,
    PlanEntry,
    PlanEvent,
    RetryEvent,
    Rule,
    RunEvent,
    RunFinishedEvent,
    RunStartedEvent,
    StepEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolProgressEvent,
    ToolResultEvent,
)

from .hostile_text import HOSTILE, raw_unsafe

OWN_STYLES = re.compile(r"\x1b\[[0-9;]*m")
"""The colours the terminal client writes itself (approver and renderers)."""
OWN_MOVES = re.compile(r"\r\x1b\[K|\r(?:\x1b\[\d+A)?\x1b\[J")
"""The renderers' own cursor moves: the spinner cleared, streamed text taken back."""


def screen(written: str) -> str:
    """What the terminal got, without the client's own styles and moves."""
    return OWN_STYLES.sub("", OWN_MOVES.sub("", written))


def _approve(params: dict[str, Any]) -> tuple[str, list[str]]:
    """The approver's output for ``params`` and the questions it asked (denied)."""
    out = io.StringIO()
    asked: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return "n"

    approver = TerminalApprover(yes=False, out=out, ask=ask, color=True)
    anyio.run(approver, params)
    return out.getvalue(), asked


def _request(tool: str, preview: dict[str, Any], title: str, patterns: list[str]) -> dict[str, Any]:
    return {
        "runId": "r1",
        "callId": "c1",
        "tool": tool,
        "title": title,
        "arguments": {"command": title},
        "preview": preview,
        "suggestedPatterns": patterns,
    }


@settings(max_examples=60, deadline=None)
@given(
    strings=st.lists(HOSTILE, min_size=5, max_size=5), tool=st.sampled_from(["bash", "mcp__x__y"])
)
def test_the_terminal_question_shows_no_raw_control_or_bidi_character(
    strings: list[str], tool: str
) -> None:
    title, command, cwd, pattern, wide = strings
    preview = {"kind": "command", "command": command, "cwd": cwd}
    written, asked = _approve(_request(tool, preview, title, [pattern, wide]))
    shown = screen(written) + "\n".join(asked)
    assert raw_unsafe(shown, lines=True) == [], repr(shown)
    _, _title, *block = written.split("\n")  # the title is one line, the rest indented
    assert all(line.startswith("  ") for line in block if line), repr(written)


@settings(max_examples=60, deadline=None)
@given(strings=st.lists(HOSTILE, min_size=4, max_size=4))
def test_the_terminal_diff_shows_no_raw_control_or_bidi_character(strings: list[str]) -> None:
    title, name, removed, added = strings
    diff = f"--- a/{name}\n+++ b/{name}\n@@ -1 +1 @@\n-{removed}\n+{added}\n"
    preview = {"kind": "diff", "uri": "file:///w/app.py", "diff": diff}
    written, asked = _approve(_request("edit_file", preview, title, [name]))
    shown = screen(written) + "\n".join(asked)
    assert raw_unsafe(shown, lines=True) == [], repr(shown)


def _events(strings: list[str]) -> list[RunEvent]:
    prompt, text, tool, label, argument, output, error, plan, rule = strings
    seq = iter(range(1, 100))

    def common() -> dict[str, Any]:
        return {"run_id": "r1", "seq": next(seq)}

    return [
        RunStartedEvent(**common(), prompt=prompt, session_id="s1"),
        StepEvent(**common(), step=1),
        TextDeltaEvent(**common(), text=text),
        AssistantEvent(**common(), text=text),
        ToolCallEvent(**common(), call_id="c1", tool=tool, arguments={"text": argument}),
        ToolCallEvent(**common(), call_id="c2", tool=tool, arguments={}, label=label),
        ApprovalEvent(
            **common(),
            call_id="c1",
            decision="auto",
            rules=[Rule(tool="bash", pattern=rule, decision="allow", scope="project")],
        ),
        ToolProgressEvent(  # as a careless server would send it: raw
            **common(), call_id="c1", tool=tool, elapsed_ms=1500, last_line=output, tail=output
        ),
        ToolResultEvent(**common(), call_id="c1", tool=tool, ok=True, output=output),
        ToolResultEvent(
            **common(), call_id="c2", tool=tool, ok=False, output=output, error=error, label=label
        ),
        PlanEvent(**common(), entries=[PlanEntry(content=plan or "x")]),
        RetryEvent(**common(), attempt=1, delay_seconds=1.0, reason=error),
        StepEvent(**common(), step=2),
        TextDeltaEvent(**common(), text=text),
        AssistantEvent(**common(), text=text),
        RunFinishedEvent(**common(), outcome="done", steps=2),
    ]


@settings(max_examples=40, deadline=None)
@given(strings=st.lists(HOSTILE, min_size=9, max_size=9), rich=st.booleans())
def test_a_runs_transcript_shows_no_raw_control_or_bidi_character(
    strings: list[str], rich: bool
) -> None:
    out = io.StringIO()
    renderer = RichRenderer(out, size=lambda: (100, 40)) if rich else TerminalRenderer(out, True)
    for event in _events(strings):
        renderer.render(event)
    result = {"outcome": "error", "steps": 2, "answer": strings[1], "error": strings[6]}
    renderer.summary(result)
    renderer.finish_turn(result, 1.0)
    shown = screen(out.getvalue())
    assert raw_unsafe(shown, lines=True) == [], repr(shown)


ESCAPE = re.compile(r"\\(?:x([0-9a-f]{2})|u([0-9a-f]{4})|U([0-9a-f]{8})|([rnt]))")


def _read_back(text: str) -> str:
    """``text`` with the sanitiser's escapes read (for text that had no backslash)."""

    def char(match: re.Match[str]) -> str:
        named = match.group(4)
        if named:
            return {"r": "\r", "n": "\n", "t": "\t"}[named]
        return chr(int(next(g for g in match.groups()[:3] if g), 16))

    return ESCAPE.sub(char, text)


@settings(max_examples=400, deadline=None)
@given(text=st.one_of(HOSTILE, st.text()), lines=st.booleans())
def test_the_sanitiser_escapes_what_hides_keeps_the_rest_and_drops_nothing(
    text: str, lines: bool
) -> None:
    from tether.text.display import shown

    once = shown(text, lines=lines)
    assert raw_unsafe(once, lines=lines) == [], repr(once)
    assert shown(once, lines=lines) == once  # shown twice reads the same
    if lines:
        assert once.count("\n") == text.count("\n")  # the lines are the lines
    else:
        assert "\n" not in once  # one line
    if all(c.isprintable() or (lines and c in "\n\t") for c in text):
        assert once == text  # what shows as itself is left as it is
    if "\\" not in text:
        expected = text.replace("\r\n", "\n") if lines else text
        assert _read_back(once) == expected  # escaped, never dropped
