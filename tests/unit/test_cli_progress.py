"""The terminal's status line of a running command (``tool-progress``): drawn in place under
its call on a colour terminal, nothing in a pipe, gone at the next event; its foreign text
shown escaped and cut to the terminal's width. And a client that meets an event kind it
does not know goes on."""

from __future__ import annotations

import io
import re
from typing import Any

import anyio
import pytest

from tether.client.connection import TetherClient
from tether.client.render import TerminalRenderer, fit
from tether.client.rich_render import RichRenderer
from tether_protocol import (
    AGENT_EVENT_METHOD,
    RunEvent,
    StepEvent,
    ToolCallEvent,
    ToolProgressEvent,
    ToolResultEvent,
)

CALL = ToolCallEvent(run_id="r", seq=2, call_id="c", tool="bash", arguments={"command": "make"})
RESULT = ToolResultEvent(run_id="r", seq=3, call_id="c", tool="bash", ok=True, output="built\n")
MOVES = re.compile(r"\r\x1b\[K|\x1b\[[0-9;]*m")


def report(last_line: str, elapsed_ms: int = 3200) -> ToolProgressEvent:
    return ToolProgressEvent(
        run_id="r", seq=2, call_id="c", tool="bash", elapsed_ms=elapsed_ms, last_line=last_line
    )


def screen(written: str) -> list[str]:
    """What stays on each line once carriage returns and erasures have done their work."""
    lines: list[str] = []
    for raw in written.split("\n"):
        line = ""
        for part in re.split(r"\r\x1b\[K|\r", raw):
            line = part
        lines.append(MOVES.sub("", line))
    return lines


@pytest.mark.parametrize("make", [TerminalRenderer, RichRenderer], ids=["plain", "rich"])
def test_a_status_line_under_the_call_until_the_result(make: Any) -> None:
    out = io.StringIO()
    renderer = make(out) if make is RichRenderer else make(out, color=True)
    renderer.render(StepEvent(run_id="r", seq=1, step=1))
    renderer.render(CALL)
    renderer.render(report("compiling foo.c"))
    assert re.search(r"  [⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] 3 s · compiling foo\.c$", screen(out.getvalue())[-1])
    renderer.render(report("linking", 4300))
    renderer.tick()
    shown = screen(out.getvalue())
    assert re.search(r" 4 s · linking$", shown[-1]) and not any("foo.c" in x for x in shown)
    renderer.render(RESULT)
    renderer.tick()
    shown = screen(out.getvalue())
    assert not any(" s · " in line for line in shown), shown  # the result took its place
    assert any("built" in line for line in shown)


def test_nothing_extra_where_the_output_is_no_terminal() -> None:
    out = io.StringIO()
    renderer = TerminalRenderer(out, color=False)
    renderer.render(CALL)
    before = out.getvalue()
    renderer.render(report("compiling foo.c"))
    renderer.tick()
    assert out.getvalue() == before


def test_the_status_line_is_shown_escaped_and_fits_the_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    out = io.StringIO()
    renderer = TerminalRenderer(out, color=True)
    renderer.render(CALL)
    renderer.render(report("\x1b]52;c;cGF3bmVk\x07 \u202eevil " + "x" * 80))
    line = screen(out.getvalue())[-1]
    assert "\x1b]" not in out.getvalue() and "\u202e" not in out.getvalue()
    assert "\\x1b]52" in line and line.endswith("…") and len(line) <= 39


def test_wide_characters_take_two_cells() -> None:
    assert fit("日本語です", 10) == "日本語です"
    assert fit("日本語です", 9) == "日本語で…"
    assert fit("plain", 5) == "plain" and fit("plainer", 5) == "plai…"


def events_of(kinds: list[dict[str, Any]]) -> list[RunEvent]:
    """What a client hands on of ``agent/event`` notifications."""
    got: list[RunEvent] = []
    client = TetherClient.__new__(TetherClient)
    client.on_event = got.append

    async def main() -> None:
        for params in kinds:
            await client._dispatch({"method": AGENT_EVENT_METHOD, "params": params})

    anyio.run(main)
    return got


def test_a_client_skips_an_event_kind_it_does_not_know() -> None:
    newer = {"runId": "r", "seq": 1, "kind": "from-the-future", "x": 1}
    known = {"runId": "r", "seq": 1, "kind": "step", "step": 1}
    assert [e.kind for e in events_of([newer, known])] == ["step"]


@pytest.mark.parametrize("make", [TerminalRenderer, RichRenderer], ids=["plain", "rich"])
async def test_no_status_line_over_a_commands_question_while_it_is_asked(make: Any) -> None:
    """A command that asks (``commandInput = "ask"``) still runs, and its reports keep
    coming: while its question waits, they must not redraw over the prompt and what is
    typed at it; once answered, the status line comes back."""
    from tether.client.approver import TerminalApprover
    from tether.client.asker import TerminalAsker

    out = io.StringIO()
    renderer = make(out) if make is RichRenderer else make(out, color=True)
    renderer.render(StepEvent(run_id="r", seq=1, step=1))
    renderer.render(CALL)
    renderer.render(report("Install? [Y/n] "))
    drawn_while_asked: list[str] = []

    def user(prompt: str) -> str:  # the prompt waits; the spinner's next frames come meanwhile
        before = len(out.getvalue())
        renderer.render(report("Install? [Y/n] ", 4300))
        renderer.tick()
        drawn_while_asked.append(out.getvalue()[before:])
        return ""  # Enter alone

    approver = TerminalApprover(yes=False, out=out, ask=user, color=True, hold=renderer.hold)
    question = {"runId": "r", "callId": "c", "question": "Install? [Y/n]", "enterAlone": True}
    assert await TerminalAsker(approver)(question) == {"answer": ""}
    assert drawn_while_asked == [""]
    # The question's own lines start on a line of their own: no status line left above them.
    shown = screen(out.getvalue())
    assert not any(re.search(r"[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] \d+ s", line) for line in shown), shown
    renderer.tick()
    assert re.search(r" 4 s · Install\? \[Y/n\]", screen(out.getvalue())[-1])
