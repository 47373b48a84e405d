"""An MCP tool in ``tether run`` at a terminal: the server configured in the user's file
starts with the session, the call is asked with the server, the tool and the arguments,
the answer is the model's, and the server's processes end with the CLI."""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import time
from pathlib import Path

from tether.client.approver import ASKED

from ..mcp.conftest import SERVER, alive, started_pids, write_notes_config
from ..waiting import wait_until_sync
from .test_cli_terminal import (
    Terminal,
    assert_nothing_left,
    processes_marked,
    run_cli,
    scripted,
)

CALL = {"name": "mcp__notes__echo", "arguments": {"text": "hello from the CLI"}}


def plain(text: str) -> str:
    """The terminal's text without its colours."""
    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def user_config(home: Path, marks: Path) -> None:
    folder = home / ".config" / "tether"
    write_notes_config(folder, marks)


def reading_until(term: Terminal, mark: Path, within: float) -> None:
    """Read the terminal until ``mark`` exists (the test server wrote it)."""
    deadline = time.monotonic() + within
    while not mark.exists():
        assert time.monotonic() < deadline, f"no {mark.name}:\n{term.text}"
        term._read(0.2)


def test_an_mcp_call_asked_and_answered_in_the_cli(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    user_config(tmp_path, marks)
    env = scripted(tmp_path, {"turns": [{"toolCalls": [CALL]}, {"text": "It said hello."}]})
    term = Terminal(["run", "say hello through the notes server"], env, tmp_path)
    term.expect(ASKED.strip(), timeout=120)
    assert 'notes › echo {"text": "hello from the CLI"}' in term.text
    assert "MCP server 'notes'" in term.text
    # a call, not a command: its rules are "this exact call" or every call of the tool
    assert "[A] always this exact call  [p] always every `mcp__notes__echo` call" in term.text
    # the server takes no changed call: no [e], and e shows the legend without it
    assert "[e]" not in term.text and "$ notes" not in term.text, term.text
    shown = plain(term.text)
    assert "→ notes · echo {" in shown, shown  # the server's name, not mcp__notes__echo
    term.send("e")
    term.expect(ASKED.strip(), timeout=30, fresh=True)  # asked again: keys typed ahead drop
    assert "this legend" in term.text and "edit the command" not in term.text, term.text
    term.send("a\r")
    assert term.wait(timeout=60) == 0, term.text
    assert "echo: hello from the CLI" in term.text and "It said hello." in term.text
    assert "✓ notes · echo" in plain(term.text), term.text
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
    term.expect("why? (Enter skips)")
    term.send("\r")
    assert term.wait(timeout=60) == 0, term.text
    assert "the user denied it" in term.text or "denied" in term.text
    assert not (marks / "called-echo").exists()
    assert_nothing_left(env)
    for pid in started_pids(marks):
        assert not alive(pid)


def test_ctrl_c_cancels_an_mcp_call_in_flight(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    user_config(tmp_path, marks)
    hang = {"name": "mcp__notes__hang", "arguments": {}}
    env = scripted(tmp_path, {"turns": [{"toolCalls": [hang]}, {"text": "never"}]})
    term = Terminal(["run", "go"], env, tmp_path)
    term.expect(ASKED.strip(), timeout=120)
    term.send("a\r")
    term.expect("approval: allow")
    reading_until(term, marks / "hanging", 60)  # the call reached the server
    term.send("\x03")
    assert term.wait(timeout=30) == 130, term.text
    assert "outcome cancelled" in term.text and "Traceback" not in term.text
    assert (marks / "cancelled").exists()  # the server was told before it was stopped
    assert_nothing_left(env)
    for pid in started_pids(marks):
        assert not alive(pid)


def test_tether_config_lists_the_servers_and_a_cloned_mcp_json_starts_nothing(
    tmp_path: Path,
) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    user_config(tmp_path, marks)
    project = tmp_path / "clone"
    project.mkdir()
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    evil = {"command": sys.executable, "args": [str(SERVER)], "env": {"NOTES_MARKS": str(theirs)}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": evil}}))
    env = scripted(tmp_path, {"turns": [{"text": "hi"}]})
    listed = run_cli(["config", "--cwd", str(project)], env, tmp_path)
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if x.strip().startswith("notes "))
    assert "notes_server.py" in line and "NOTES_MARKS" in line and str(marks) not in line
    assert str(tmp_path / ".config" / "tether" / "config.toml") in line
    assert "not started: evil of .mcp.json (the project is not trusted)" in listed.stdout
    ran = run_cli(["run", "go"], env, project)
    assert ran.returncode == 0, ran.stderr
    [warning] = [x for x in ran.stderr.splitlines() if ".mcp.json" in x]
    assert "not starting the MCP servers evil of" in warning and "trustedProjects" in warning
    assert list(theirs.iterdir()) == []  # the project's server never started


def test_a_killed_server_leaves_no_mcp_process(tmp_path: Path) -> None:
    """``kill -9`` of ``tether serve`` mid-call: nothing can run in it then, but the
    trampoline each MCP server starts through gets Tether's death signal and ends them."""
    marks = tmp_path / "marks"
    marks.mkdir()
    user_config(tmp_path, marks)
    hang = {"name": "mcp__notes__spawn", "arguments": {}}
    turns = [{"toolCalls": [hang]}, {"toolCalls": [{"name": "mcp__notes__hang", "arguments": {}}]}]
    env = scripted(tmp_path, {"turns": turns})
    term = Terminal(["run", "go", "--yes"], env, tmp_path)
    reading_until(term, marks / "hanging", 120)
    pids = started_pids(marks)
    assert len(pids) == 2 and all(alive(p) for p in pids)  # the server and its child
    [serve] = [
        p
        for p in processes_marked(env)
        if b"serve" in Path(f"/proc/{p}/cmdline").read_bytes().split(b"\0")
    ]
    os.kill(serve, signal.SIGKILL)
    term.wait(timeout=30)
    wait_until_sync(lambda: not any(alive(p) for p in pids), "the MCP processes to end")
    assert_nothing_left(env)
