"""The one renderer of each editor — Neovim's ``render.lua``, Emacs's ``tether-render.el`` —
fed a run with an event of every kind (built from the protocol's own records): what each
view's style makes of each event, and the transcript and the chat showing that run."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

from tether_protocol.events import (
    EVENT_KINDS,
    ApprovalEvent,
    AssistantEvent,
    CompactedEvent,
    InjectionFlaggedEvent,
    PlanEntry,
    PlanEvent,
    RetryEvent,
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
from tether_protocol.rules import Rule

from .conftest import Nvim, env
from .emacs_harness import STORIES, emacs_batch, story_env


def run_events() -> list[dict[str, Any]]:
    """One run, as the server sends it: every event kind, the common cases of each."""
    seq = itertools.count(1)

    def wire(record: type[Any], **fields: Any) -> dict[str, Any]:
        event: dict[str, Any] = record(run_id="run-1", seq=next(seq), **fields).to_wire()
        return event

    return [
        wire(RunStartedEvent, prompt="fix the test\nin tests/", session_id="s-1"),
        wire(StepEvent, step=1),
        wire(TextDeltaEvent, text="Let me "),
        wire(TextDeltaEvent, text="look."),
        wire(AssistantEvent, text="Let me look."),
        wire(ToolCallEvent, call_id="c1", tool="read_file", arguments={"path": "app.py"}),
        wire(ToolResultEvent, call_id="c1", tool="read_file", ok=True, output="1\tx = 1\n2\ty\n"),
        wire(InjectionFlaggedEvent, call_id="c1", tool="read_file", markers=["ignore previous"]),
        wire(StepEvent, step=2),
        # the model thinks before it answers: a word cut between two pieces, two lines, and
        # what a screen would obey (an escape sequence, a bidi override) shown escaped
        wire(ThinkingEvent, text="The te"),
        wire(ThinkingEvent, text="st wants a comma.\nAdd it\x1b[2J \u202eexe.txt"),
        wire(AssistantEvent, text="  Running the tests.\n"),  # nothing streamed: the whole text
        wire(ToolCallEvent, call_id="c2", tool="bash", arguments={"command": "pytest -q"}),
        wire(
            ApprovalEvent,
            call_id="c2",
            decision="auto",
            rules=[Rule(tool="bash", pattern="pytest *", decision="allow", scope="project")],
        ),
        wire(  # the command still runs: 3.2 s so far (a transient report, replaced)
            ToolProgressEvent,
            call_id="c2",
            tool="bash",
            elapsed_ms=3200,
            last_line="collected 3 items",
            tail="collected 3 items\n",
        ),
        wire(
            ToolResultEvent,
            call_id="c2",
            tool="bash",
            ok=False,
            output="exit code: 1\n1 failed",
            error="exit code 1",
        ),
        wire(PlanEvent, entries=[PlanEntry(content="fix greet", status="in_progress")]),
        wire(RetryEvent, attempt=1, delay_seconds=2.0, reason="429 Too Many Requests"),
        wire(StepEvent, step=3),
        wire(
            ToolCallEvent,
            call_id="c3",
            tool="mcp__notes__echo",
            arguments={"text": "hi"},
            label="notes · echo",
        ),
        wire(ApprovalEvent, call_id="c3", decision="allow"),
        wire(
            ToolResultEvent,
            call_id="c3",
            tool="mcp__notes__echo",
            ok=True,
            output="hi",
            label="notes · echo",
        ),
        wire(ToolCallEvent, call_id="c4", tool="list_files", arguments={}),
        wire(ApprovalEvent, call_id="c4", decision="auto"),
        wire(ToolResultEvent, call_id="c4", tool="list_files", ok=True, output="app.py"),
        wire(ToolCallEvent, call_id="c5", tool="write_file", arguments={"path": "notes.txt"}),
        wire(ApprovalEvent, call_id="c5", decision="denied-by-default"),
        wire(
            ToolResultEvent,
            call_id="c5",
            tool="write_file",
            ok=False,
            output="denied: no answer",
            error="denied: no answer",
        ),
        wire(CompactedEvent, tokens_before=9000, tokens_after=1200),
        wire(UsageEvent, input_tokens=1500, output_tokens=80, cost_usd=0.0123),
        wire(RunFinishedEvent, outcome="done", steps=3),
    ]


EVENTS = run_events()
SHOWN_THOUGHT = "st wants a comma.\nAdd it\\x1b[2J \\u202eexe.txt"
"""The second piece of thinking as the editors show it: its escape sequence and bidi
override written out, not obeyed."""
RESULT = {"runId": "run-1", "sessionId": "s-1", "outcome": "done", "steps": 3, "answer": ""}


def test_the_run_holds_every_event_kind_of_the_protocol() -> None:
    assert {event["kind"] for event in EVENTS} == set(EVENT_KINDS)


def shown(pieces: list[dict[str, Any]]) -> list[str]:
    """A Neovim renderer's pieces, one string each: ``kind: lines`` (``id`` when a call's)."""
    out = []
    for piece in pieces:
        lines = piece.get("lines") or [piece.get("line") or piece.get("text") or ""]
        if piece["kind"] == "thinking":  # its summary line, then the piece of text it adds
            lines = [piece["line"], piece["text"]]
        lines = lines + piece.get("output", [])
        about = f"@{piece['id']}" if "id" in piece else ""
        out.append(f"{piece['kind']}{about}: " + " | ".join(lines))
    return out


def test_neovim_one_renderer_for_the_transcript_and_the_chat(nvim: Nvim) -> None:
    r = nvim.run("render", env=env(EVENTS=EVENTS, RESULT=RESULT))
    by_event = [(p["kind"], shown(p["transcript"]), shown(p["chat"])) for p in r["pieces"]]
    json_args = '{"path": "app.py"}'
    assert by_event == [
        ("run-started", ["prompt: ▶ fix the test …"], []),
        ("step", ["lines: ── step 1 ──"], ["end: "]),
        ("text-delta", ["text: Let me "], ["text: Let me "]),
        ("text-delta", ["text: look."], ["text: look."]),
        ("assistant", ["end: "], ["end: "]),  # streamed already
        ("tool-call", [f"call@c1: → read_file {json_args}"], ["call@c1: → read_file app.py"]),
        (
            "tool-result",
            [f"result@c1: ✓ read_file {json_args} |   1\tx = 1 |   2\ty"],
            ["result@c1: ✓ read_file app.py |   1\tx = 1 |   2\ty"],
        ),
        (
            "injection-flagged",
            ["note@c1:   ⚠ read_file output looks like instructions: ignore previous"],
            ["note@c1:   ⚠ read_file output looks like instructions: ignore previous"],
        ),
        ("step", ["lines: ── step 2 ──"], ["end: "]),
        (  # a collapsed block whose summary counts the words so far
            "thinking",
            ["thinking: ▸ thinking (2 words) | The te"],
            ["thinking: ▸ thinking (2 words) | The te"],
        ),
        (  # the same block grows; what a screen would obey is shown escaped
            "thinking",
            [f"thinking: ▸ thinking (8 words) | {SHOWN_THOUGHT}"],
            [f"thinking: ▸ thinking (8 words) | {SHOWN_THOUGHT}"],
        ),
        ("assistant", ["text: Running the tests.", "end: "], ["text: Running the tests.", "end: "]),
        (
            "tool-call",
            ['call@c2: → bash {"command": "pytest -q"}'],
            ["call@c2: → bash pytest -q"],
        ),
        (
            "approval",
            ["note@c2:   approval: auto · rule `pytest *` (project)"],
            ["note@c2:   approval: auto · rule `pytest *` (project)"],
        ),
        (
            "tool-progress",  # on the call's line, until its result takes the line back
            ['progress@c2: → bash {"command": "pytest -q"}  ⠹ 3 s · collected 3 items'],
            ["progress@c2: → bash pytest -q  ⠹ 3 s · collected 3 items"],
        ),
        (
            "tool-result",  # the output, not the short error: it holds the error and more
            ['result@c2: ✗ bash {"command": "pytest -q"} |   exit code: 1 |   1 failed'],
            ["result@c2: ✗ bash pytest -q |   exit code: 1 |   1 failed"],
        ),
        ("plan", [], []),
        ("retry", [], []),
        ("step", ["lines: ── step 3 ──"], ["end: "]),
        (
            "tool-call",  # an MCP call by the name people know, in both
            ['call@c3: → notes · echo {"text": "hi"}'],
            ['call@c3: → notes · echo {"text": "hi"}'],
        ),
        ("approval", ["note@c3:   approval: allow"], ["note@c3:   approval: allow"]),
        (
            "tool-result",
            ['result@c3: ✓ notes · echo {"text": "hi"} |   hi'],
            ['result@c3: ✓ notes · echo {"text": "hi"} |   hi'],
        ),
        ("tool-call", ["call@c4: → list_files {}"], ["call@c4: → list_files"]),
        ("approval", ["note@c4: "], ["note@c4: "]),  # allowed unasked, for no stated reason
        (
            "tool-result",
            ["result@c4: ✓ list_files {} |   app.py"],
            ["result@c4: ✓ list_files |   app.py"],
        ),
        (
            "tool-call",
            ['call@c5: → write_file {"path": "notes.txt"}'],
            ["call@c5: → write_file notes.txt"],
        ),
        (
            "approval",
            ["note@c5:   approval: denied-by-default"],
            ["note@c5:   approval: denied-by-default"],
        ),
        (
            "tool-result",
            ['result@c5: ✗ write_file {"path": "notes.txt"} |   denied: no answer'],
            ["result@c5: ✗ write_file notes.txt |   denied: no answer"],
        ),
        (
            "compacted",
            ["lines: · context compacted: 9000 → 1200 tokens"],
            ["lines: _context compacted: 9000 → 1200 tokens_"],
        ),
        ("usage", [], []),
        (
            "run-finished",
            ["outcome: ■ done · 3 steps · 1500 in / 80 out tokens · $0.0123"],
            ["outcome: ■ done · 3 steps"],
        ),
    ]
    # Each view's thinking block is a fold, closed, that reads as its summary line.
    for view in ("transcript", "chat"):
        fold = r["thinking_folds"][view]
        assert fold["closed"] == fold["line"] and fold["closed_end"] == fold["line"] + 2, fold
        assert fold["text"] == "▸ thinking (8 words)", fold
    # The agent/run answer after run-finished adds nothing; a failed request says why.
    finish = r["finish_pieces"]
    assert finish["transcript"] == [] and finish["chat"] == []
    assert shown(finish["failed"]) == ["outcome: ✗ error: the server exited"]

    # The transcript and the chat place those pieces: folds, blank lines, the growing line.
    assert r["transcript"] == [
        "▶ fix the test …",
        "── step 1 ──",
        "Let me look.",
        f"✓ read_file {json_args}",
        "  1\tx = 1",
        "  2\ty",
        "  ⚠ read_file output looks like instructions: ignore previous",
        "── step 2 ──",
        "▸ thinking (8 words)",
        "  The test wants a comma.",
        "  Add it\\x1b[2J \\u202eexe.txt",
        "Running the tests.",
        '✗ bash {"command": "pytest -q"}',
        "  approval: auto · rule `pytest *` (project)",
        "  exit code: 1",
        "  1 failed",
        "── step 3 ──",
        '✓ notes · echo {"text": "hi"}',
        "  approval: allow",
        "  hi",
        "✓ list_files {}",
        "  app.py",
        '✗ write_file {"path": "notes.txt"}',
        "  approval: denied-by-default",
        "  denied: no answer",
        "· context compacted: 9000 → 1200 tokens",
        "■ done · 3 steps · 1500 in / 80 out tokens · $0.0123",
    ]
    chat = r["chat"]
    assert chat[chat.index("## You") :] == [
        "## You",
        "",
        "Let me look.",
        "",
        "✓ read_file app.py",
        "  1\tx = 1",
        "  2\ty",
        "  ⚠ read_file output looks like instructions: ignore previous",
        "",
        "▸ thinking (8 words)",
        "  The test wants a comma.",
        "  Add it\\x1b[2J \\u202eexe.txt",
        "",
        "Running the tests.",
        "",
        "✗ bash pytest -q",
        "  approval: auto · rule `pytest *` (project)",
        "  exit code: 1",
        "  1 failed",
        '✓ notes · echo {"text": "hi"}',
        "  approval: allow",
        "  hi",
        "✓ list_files",
        "  app.py",
        "✗ write_file notes.txt",
        "  approval: denied-by-default",
        "  denied: no answer",
        "",
        "_context compacted: 9000 → 1200 tokens_",
        "",
        "■ done · 3 steps",
        "",
        "## You",
        "",
    ]


def test_emacs_one_renderer_for_the_transcript_and_the_chat(tmp_path: Path) -> None:
    events = tmp_path / "events.json"
    events.write_text(json.dumps(EVENTS))
    story = story_env(tmp_path, tmp_path, {"turns": []})
    story.update(TETHER_EVENTS=str(events), TETHER_RUN_RESULT=json.dumps(RESULT))
    emacs_batch(STORIES / "render-story.el", story, "")
    r = json.loads((tmp_path / "result.json").read_text())
    call, ok, failed = "tether-tool-face", "tether-ok-face", "tether-failed-face"
    outcome = "tether-outcome-face"

    def result(mark: str, face: str, tool: str, first: str) -> list[str]:
        return [f"  {{{face}:{mark}}} {{{call}:{tool}}}: {first}"]

    echo = '{"text":"hi"}'
    by_event = [tuple(p) for p in r["pieces"]]
    assert by_event == [
        ("run-started", ["{tether-prompt-face:▶ fix the test\nin tests/}"], []),
        ("step", [], []),
        ("text-delta", [], [["text", "Let me "]]),  # the chat streams; the transcript waits
        ("text-delta", [], [["text", "look."]]),
        ("assistant", ["Let me look."], []),
        ("tool-call", [f"{{{call}:→ read_file app.py}}"], [f"{{{call}:→ read_file app.py}}"]),
        (
            "tool-result",
            result("✓", ok, "read_file", "1\tx = 1"),
            result("✓", ok, "read_file", "1\tx = 1"),
        ),
        ("injection-flagged", [], []),
        ("step", [], []),
        (  # the model's thinking: a block, its summary counting the words so far
            "thinking",
            [["thinking", "new", "▸ thinking (2 words)", "The te"]],
            [["thinking", "new", "▸ thinking (2 words)", "The te"]],
        ),
        (  # the same block grows; what a screen would obey is shown escaped
            "thinking",
            [["thinking", "more", "▸ thinking (8 words)", SHOWN_THOUGHT]],
            [["thinking", "more", "▸ thinking (8 words)", SHOWN_THOUGHT]],
        ),
        ("assistant", ["Running the tests."], ["Running the tests."]),
        ("tool-call", [f"{{{call}:→ bash pytest -q}}"], [f"{{{call}:→ bash pytest -q}}"]),
        ("approval", [], [f"{{{ok}:  ✓ allowed without asking}}"]),
        (
            "tool-progress",  # a line of its own, taken away by the next event
            [f"{{{outcome}:  ⠹ 3 s · collected 3 items}}"],
            [f"{{{outcome}:  ⠹ 3 s · collected 3 items}}"],
        ),
        (
            "tool-result",  # the short error: one line says why
            result("✗", failed, "bash", "exit code 1"),
            result("✗", failed, "bash", "exit code 1"),
        ),
        ("plan", [], []),
        ("retry", [], []),
        ("step", [], []),
        (
            "tool-call",  # an MCP call by the name people know, about its arguments
            [f"{{{call}:→ notes · echo {echo}}}"],
            [f"{{{call}:→ notes · echo {echo}}}"],
        ),
        ("approval", [], []),  # the user's answer closes its approval's block
        (
            "tool-result",
            result("✓", ok, "notes · echo", "hi"),
            result("✓", ok, "notes · echo", "hi"),
        ),
        ("tool-call", [f"{{{call}:→ list_files}}"], [f"{{{call}:→ list_files}}"]),
        ("approval", [], [f"{{{ok}:  ✓ allowed without asking}}"]),
        (
            "tool-result",
            result("✓", ok, "list_files", "app.py"),
            result("✓", ok, "list_files", "app.py"),
        ),
        (
            "tool-call",
            [f"{{{call}:→ write_file notes.txt}}"],
            [f"{{{call}:→ write_file notes.txt}}"],
        ),
        ("approval", [], [f"{{{failed}:  ✗ denied (no answer)}}"]),
        (
            "tool-result",
            result("✗", failed, "write_file", "denied: no answer"),
            result("✗", failed, "write_file", "denied: no answer"),
        ),
        ("compacted", [], []),
        ("usage", [], []),
        (
            "run-finished",
            ["{tether-outcome-face:■ done · 3 steps}"],
            ["{tether-outcome-face:■ done · 3 steps}"],
        ),
    ]

    # The transcript and the chat put those lines in their buffers, faces and all; the
    # running command's status line is gone once its result came. The thinking is one
    # block: its summary line, then its text, indented.
    thought = "  The test wants a comma.\n  Add it\\x1b[2J \\u202eexe.txt"
    block = f"{{tether-thinking-face:▸ thinking (8 words)\n{thought}}}\n"

    def written(items: list[Any]) -> list[str]:
        return [
            item + "\n" if isinstance(item, str) else block if item[1] == "new" else ""
            for item in items
        ]

    kept = [(kind, *views) for kind, *views in by_event if kind != "tool-progress"]
    assert r["transcript"] == "".join(s for _, items, _ in kept for s in written(items))
    chat = r["chat"]
    answer = chat[chat.index("}") + 1 :]  # after the chat's first lines
    assert answer == "".join(
        [
            "Let me look.\n",
            *(s for _, _, items in kept[5:] for s in written(items)),
            "\n{tether-prompt-face:tether> }",  # a blank line, then the prompt
        ]
    )
    # On screen the block is its summary line alone; RET on it shows the text, again hides it.
    for view in ("transcript", "chat"):
        assert "▸ thinking (8 words)\nRunning the tests.\n" in r[f"{view}Shown"]
        assert "The test wants" not in r[f"{view}Shown"]
        opened = f"▸ thinking (8 words)\n{thought}\nRunning the tests.\n"
        assert opened in r[f"{view}Opened"]
    assert r["chatClosed"] == r["chatShown"]


def test_neovim_shows_the_wait_for_mcp_servers_on_a_line_of_its_own(nvim: Nvim) -> None:
    """The wait before the first model call is no call of the model's (``mcp-start``): its
    reports show on a line of their own, in both views, and the last one stays."""
    seq = itertools.count(1)

    def wire(record: type[Any], **fields: Any) -> dict[str, Any]:
        event: dict[str, Any] = record(run_id="run-1", seq=next(seq), **fields).to_wire()
        return event

    def waited(ms: int, line: str) -> dict[str, Any]:
        return wire(
            ToolProgressEvent, call_id="mcp-start", tool="mcp", elapsed_ms=ms, last_line=line
        )

    events = [
        wire(RunStartedEvent, prompt="list my notes", session_id="s-1"),
        waited(1000, "waiting for MCP server notes to start"),
        waited(2000, "MCP server notes started"),
        wire(StepEvent, step=1),
        wire(AssistantEvent, text="Noted."),
        wire(RunFinishedEvent, outcome="done", steps=1),
    ]
    result = {"runId": "run-1", "sessionId": "s-1", "outcome": "done", "steps": 1}
    r = nvim.run("render", env=env(EVENTS=events, RESULT=result))
    first = "⋯ ⠋ 1 s · waiting for MCP server notes to start"
    then = "⋯ ⠋ 2 s · MCP server notes started"
    waits = [(shown(p["transcript"]), shown(p["chat"])) for p in r["pieces"][1:3]]
    assert waits == [
        ([f"call@mcp-start: {first}"], [f"call@mcp-start: {first}"]),
        ([f"progress@mcp-start: {then}"], [f"progress@mcp-start: {then}"]),
    ]
    assert then in r["chat"] and first not in r["chat"], r["chat"]
    assert then in r["transcript"] and first not in r["transcript"], r["transcript"]


HIDDEN = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u206f\ufeff\ufff9-\ufffb\U000e0000-\U000e007f]"
)
"""What a screen would obey or hide (``server/tether/text/display.py``): none of it may
reach a buffer."""


def foreign_events() -> list[dict[str, Any]]:
    """A run whose model, tools and MCP server write what a screen would obey or hide: an
    escape sequence, a bidi override, a zero-width space, a tag character, a carriage
    return; and the model's own text of a backslash escape (``\\x1b`` as four characters),
    which is shown as it is, not doubled. A ``\\r\\n`` is cut between two deltas."""
    seq = itertools.count(1)

    def wire(record: type[Any], **fields: Any) -> dict[str, Any]:
        event: dict[str, Any] = record(run_id="run-1", seq=next(seq), **fields).to_wire()
        return event

    label = "notes\x1b[2K\r · echo\u202e"
    return [
        wire(RunStartedEvent, prompt="say it", session_id="s-1"),
        wire(StepEvent, step=1),
        wire(TextDeltaEvent, text="A\x1b[31mred\x1b[0m \u202eexe.txt\r"),
        wire(TextDeltaEvent, text="\nzero\u200bwidth tag\U000e0041 literal \\x1b end"),
        wire(AssistantEvent, text="ignored: streamed"),
        wire(
            ToolCallEvent,
            call_id="c1",
            tool="mcp__notes__echo",
            arguments={"text": "hi\u202e"},
            label=label,
        ),
        wire(
            ToolResultEvent,
            call_id="c1",
            tool="mcp__notes__echo",
            ok=False,
            output="out\x1b[1m\u200b\nnext\rline",
            error="bad\u202eerror\x07",
            label=label,
        ),
        wire(PlanEvent, entries=[PlanEntry(content="plan\x1b[2J\u202e", status="pending")]),
        wire(StepEvent, step=2),
        wire(AssistantEvent, text="Done\u202e \x1b]0;title\x07 \\x1b"),
        wire(StepEvent, step=3),
        wire(TextDeltaEvent, text="last\r"),
        wire(RunFinishedEvent, outcome="done", steps=3),
    ]


FOREIGN = foreign_events()
STREAMED = "A\\x1b[31mred\\x1b[0m \\u202eexe.txt"
"""The first delta as the editors show it: its trailing ``\\r`` held for the next piece."""
STREAMED_2 = "\nzero\\u200bwidth tag\\U000e0041 literal \\x1b end"
"""The second: the held ``\\r`` and its ``\\n`` one line break; the model's ``\\x1b`` kept."""
ANSWER = "Done\\u202e \\x1b]0;title\\x07 \\x1b"
LABEL = "notes\\x1b[2K\\r · echo\\u202e"


def test_neovim_shows_foreign_text_escaped(nvim: Nvim) -> None:
    """Everything of the model's, a tool's and an MCP server's reaches the transcript and
    the chat escaped as the server's display does, once."""
    result = {"runId": "run-1", "sessionId": "s-1", "outcome": "done", "steps": 3, "answer": ""}
    r = nvim.run("render", env=env(EVENTS=FOREIGN, RESULT=result))
    chat = [shown(p["chat"]) for p in r["pieces"]]
    assert chat[2] == [f"text: {STREAMED}"]
    assert chat[3] == [f"text: {STREAMED_2}"]
    assert chat[5] == [f'call@c1: → {LABEL} {{"text": "hi\\u202e"}}']
    assert chat[6] == [
        f'result@c1: ✗ {LABEL} {{"text": "hi\\u202e"}} |   out\\x1b[1m\\u200b |   next\\rline'
    ]
    assert chat[9] == [f"text: {ANSWER}", "end: "]
    assert chat[11] == ["text: last"]
    assert chat[12][0] == "text: \\r"  # the held carriage return, once nothing follows it
    for lines in (r["chat"], r["transcript"]):
        text = "\n".join(lines)
        assert HIDDEN.search(text) is None, text
        assert "A\\x1b[31mred\\x1b[0m \\u202eexe.txt" in lines, lines
        assert "zero\\u200bwidth tag\\U000e0041 literal \\x1b end" in lines, lines
        assert ANSWER in lines and "last\\r" in lines, lines
        assert "\\\\" not in text, text  # nothing escaped twice


def test_emacs_shows_foreign_text_escaped(tmp_path: Path) -> None:
    """The same in ``*tether*`` and ``*tether-chat*``: escaped before it is put in."""
    events = tmp_path / "events.json"
    events.write_text(json.dumps(FOREIGN))
    result = {"runId": "run-1", "sessionId": "s-1", "outcome": "done", "steps": 3, "answer": ""}
    story = story_env(tmp_path, tmp_path, {"turns": []})
    story.update(TETHER_EVENTS=str(events), TETHER_RUN_RESULT=json.dumps(result))
    emacs_batch(STORIES / "render-story.el", story, "")
    r = json.loads((tmp_path / "result.json").read_text())
    chat = [p[2] for p in r["pieces"]]
    assert chat[2] == [["text", STREAMED]]
    assert chat[3] == [["text", STREAMED_2]]
    call = "tether-tool-face"
    assert chat[5] == [f'{{{call}:→ {LABEL} {{"text":"hi\\u202e"}}}}']
    assert chat[6] == [f"  {{tether-failed-face:✗}} {{{call}:{LABEL}}}: bad\\u202eerror\\x07"]
    assert chat[11] == [["text", "last"]]
    assert chat[12][0] == ["text", "\\r"]
    transcript = [p[1] for p in r["pieces"]]
    assert transcript[9] == [ANSWER]
    for view in ("transcript", "chat"):
        text = r[view]
        assert HIDDEN.search(text) is None, text
        assert "\\\\" not in text, text
    assert f"{STREAMED}{STREAMED_2}" in r["chat"]
    assert ANSWER in r["chat"] and "last\\r" in r["chat"]
    assert f"{ANSWER}" in r["transcript"]
