"""An MCP tool in ``tether run`` at a terminal: the server configured in the user's file
starts with the session, the call is asked with the server, the tool and the arguments,
the answer is the model's, and the server's processes end with the CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tether.client.approver import ASKED

from ..mcp.conftest import SERVER, alive, started_pids
from .test_cli_terminal import Terminal, assert_nothing_left, scripted

CALL = {"name": "mcp__notes__echo", "arguments": {"text": "hello from the CLI"}}


def user_config(home: Path, marks: Path) -> None:
    folder = home / ".config" / "tether"
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text(
        "[mcpServers.notes]\n"
        f"command = {json.dumps(sys.executable)}\n"
        f"args = [{json.dumps(str(SERVER))}]\n"
        f"env = {{ NOTES_MARKS = {json.dumps(str(marks))} }}\n"
        "startupTimeoutSeconds = 90\n"
    )


def test_an_mcp_call_asked_and_answered_in_the_cli(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    user_config(tmp_path, marks)
    env = scripted(tmp_path, {"turns": [{"toolCalls": [CALL]}, {"text": "It said hello."}]})
    term = Terminal(["run", "say hello through the notes server"], env, tmp_path)
    term.expect(ASKED.strip(), timeout=120)
    assert 'notes › echo {"text": "hello from the CLI"}' in term.text
    assert "MCP server 'notes'" in term.text
    term.send("a\r")
    assert term.wait(timeout=60) == 0, term.text
    assert "echo: hello from the CLI" in term.text and "It said hello." in term.text
    assert (marks / "called-echo").read_text() == "hello from the CLI"
    assert_nothing_left(env)
    pids = started_pids(marks)
    assert len(pids) == 1 and not alive(pids[0])


def test_a_denied_mcp_call_in_the_cli_never_reaches_the_server(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    user_config(tmp_path, marks)
    env = scripted(tmp_path, {"turns": [{"toolCalls": [CALL]}, {"text": "Not allowed."}]})
    term = Terminal(["run", "go"], env, tmp_path)
    term.expect(ASKED.strip(), timeout=120)
    term.send("d\r")
    term.expect("why (optional)")
    term.send("\r")
    assert term.wait(timeout=60) == 0, term.text
    assert "the user denied it" in term.text or "denied" in term.text
    assert not (marks / "called-echo").exists()
    assert_nothing_left(env)
    for pid in started_pids(marks):
        assert not alive(pid)
