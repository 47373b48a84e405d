"""An MCP call in a real ``emacs -nw`` (in tmux): the approval names the server, the tool and
the JSON arguments (a call, not a shell command), ``a`` allows it and the server is called
once. ``TETHER_EMACS_MCP_SCREEN=path`` saves the screen with the approval waiting."""

from __future__ import annotations

import os
from pathlib import Path

from ..mcp.conftest import alive, started_pids, write_notes_config
from ..waiting import wait_until_sync
from .emacs_harness import answers, approvals_asked
from .emacs_tmux import wait_for_report
from .test_emacs_keys import emacs_with_keys, start_run, wire_of

ECHO = {"name": "mcp__notes__echo", "arguments": {"text": "hello from Emacs"}}


def test_an_mcp_call_asked_in_emacs_shows_server_tool_and_arguments(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    config = tmp_path / "home" / ".config" / "tether"
    write_notes_config(config, marks)
    turns = {"turns": [{"toolCalls": [ECHO]}, {"text": "It said hello."}]}
    with emacs_with_keys(tmp_path, turns) as (emacs, folder):
        start_run(emacs, "say hello through notes")
        emacs.wait_for("Tether wants to: MCP notes: echo", timeout=90)
        emacs.command("tether-goto-approval")
        screen = emacs.wait_for("a allow · A always · d deny")
        if os.environ.get("TETHER_EMACS_MCP_SCREEN"):
            Path(os.environ["TETHER_EMACS_MCP_SCREEN"]).write_text(screen)
        assert '\nnotes › echo {"text": "hello from Emacs"}' in screen, screen
        assert "$ notes" not in screen, screen
        assert "(in MCP server 'notes'" in screen, screen
        emacs.keys("a")
        emacs.wait_for("Tether done")
        report = wait_for_report(folder / "result.json", runs=1)
    [asked] = approvals_asked(wire_of(folder))
    assert asked["params"]["tool"] == "mcp__notes__echo"
    assert [a["result"]["decision"] for a in answers(wire_of(folder), asked["id"])] == ["allow"]
    assert report["outcome"] == "done", report
    # The transcript names the call as people know it (the server's name), with its arguments.
    transcript = report["transcript"]
    assert '→ notes · echo {"text":"hello from Emacs"}' in transcript, transcript
    assert "✓ notes · echo: " in transcript, transcript
    assert "mcp__notes__echo" not in transcript, transcript
    assert (marks / "called-echo").read_text() == "hello from Emacs"
    # Emacs is gone, so is its server: the MCP server's process group goes with it.
    pids = started_pids(marks)
    assert len(pids) == 1
    wait_until_sync(lambda: not alive(pids[0]), "the MCP server to end with Emacs", 20)
