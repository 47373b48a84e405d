"""``tether acp``'s read-only mode is decided by what a call does, not by the tool's name or
the user's allows: a call that may change anything is refused before any rule, ``autoApprove``
or earlier "allow always" is consulted, and the client and the model are told why. And an
MCP rule or ``autoApprove`` entry naming a server covers that server alone, never one whose
name merely sanitises to the same prefix.

Each test drives the real ``tether acp`` on the scripted model, with the user's own config
(``autoApprove``) and rules files, and a real MCP server over stdio (``notes_mcp.py``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from .recorder import NOTHING, RecordingClient
from .tether import EOF_WITHIN, call, tether_acp, turns

NOTES_MCP = Path(__file__).with_name("notes_mcp.py")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "app.py").write_text('print("x")\n')
    return folder


def user_files(state: Path, config: str, rules: str = "") -> None:
    """The user's ``config.toml`` and ``rules.toml`` where ``tether_env`` puts the home."""
    folder = state / "home" / ".config" / "tether"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(config)
    if rules:
        (folder / "rules.toml").write_text(rules)


def notes_server(name: str, folder: Path) -> dict[str, Any]:
    """An ACP ``McpServer`` (stdio) named ``name`` running ``notes_mcp.py`` on the notes
    file ``folder/notes.txt``, recording its calls in ``folder/calls.txt``."""
    folder.mkdir(parents=True, exist_ok=True)
    return {
        "name": name,
        "command": sys.executable,
        "args": [str(NOTES_MCP)],
        "env": [
            {"name": "NOTES_MCP_FILE", "value": str(folder / "notes.txt")},
            {"name": "NOTES_MCP_CALLS", "value": str(folder / "calls.txt")},
        ],
    }


def called(folder: Path) -> list[str]:
    calls = folder / "calls.txt"
    return calls.read_text().split() if calls.exists() else []


def outcomes(client: RecordingClient) -> list[tuple[str, str]]:
    """Each tool call of the conversation, in order: its final status and what it said (not
    the wait for MCP servers still starting, shown as a call of its own on a slow machine)."""
    order = [
        u.update["toolCallId"]
        for u in client.updates
        if u.kind == "tool_call" and not u.update["toolCallId"].endswith("/mcp-start")
    ]
    final: dict[str, tuple[str, str]] = {}
    for u in client.updates:
        if u.kind == "tool_call_update" and "rawOutput" in u.update:
            said = " ".join(
                c["content"].get("text", "")
                for c in u.update.get("content") or []
                if c.get("type") == "content"
            )
            final[u.update["toolCallId"]] = (u.update["status"], said)
    return [final[i] for i in order]


def logged(state: Path) -> str:
    return "".join(p.read_text() for p in (state / "sessions").rglob("*.jsonl"))


def assert_refused_as_read_only(outcome: tuple[str, str]) -> None:
    status, said = outcome
    assert status == "failed", outcome
    assert "read-only" in said and "nothing was changed" in said, said
    assert "denied it" not in said, said  # no one denied it: it may not run at all


async def test_an_auto_approved_mcp_write_does_not_run_in_read_only(
    root: Path, tmp_path: Path
) -> None:
    """``autoApprove = ["mcp__notes__*"]``: in read-only mode the server's writing tool is
    refused, so is a tool claiming both read-only and destructive; the read-only one runs."""
    user_files(tmp_path, 'autoApprove = ["mcp__notes__*"]\n')
    server = tmp_path / "notes"
    script = turns(
        {
            "tool_calls": [
                call("mcp__notes__write_note", text="from the model"),
                call("mcp__notes__erase_notes"),
                call("mcp__notes__read_note"),
            ]
        },
        {"text": "I could not write."},
    )
    client = RecordingClient(capabilities=NOTHING, permission="allow_once")
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root, mcp_servers=[notes_server("notes", server)])
        (server / "notes.txt").write_text("kept\n")
        await agent.set_mode(session, "read-only")
        assert (await agent.prompt(session, "note it"))["stopReason"] == "end_turn"
        assert called(server) == ["read_note"]  # the read-only tool ran: the server was up
        assert (server / "notes.txt").read_text() == "kept\n"
        assert client.permissions == []  # refused, not asked
        write, erase, read = outcomes(client)
        assert_refused_as_read_only(write)
        assert_refused_as_read_only(erase)
        assert "destructive" in erase[1]
        assert read == ("completed", read[1]) and "kept" in read[1]
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean
    assert "read-only" in logged(tmp_path)  # what the model read


async def test_auto_approved_and_rule_allowed_commands_and_edits_do_not_run_in_read_only(
    root: Path, tmp_path: Path
) -> None:
    """``autoApprove`` naming ``bash`` and the edit tools, and a user rule allowing
    ``touch *``: in read-only mode no command that may change anything runs and no file is
    written; a command the built-in read-only rules prove runs."""
    user_files(
        tmp_path,
        'autoApprove = ["bash", "edit_file", "write_file"]\n',
        '[[rules]]\ntool = "bash"\npattern = "touch *"\ndecision = "allow"\n',
    )
    script = turns(
        {
            "tool_calls": [
                call("bash", command="echo made > out.txt"),
                call("bash", command="touch touched.txt"),
                call("edit_file", path="app.py", old_text='"x"', new_text='"hi"'),
                call("write_file", path="new.txt", content="new\n"),
                call("bash", command="ls"),
            ]
        },
        {"text": "Nothing changed."},
    )
    client = RecordingClient(capabilities=NOTHING, permission="allow_once")
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        await agent.set_mode(session, "read-only")
        assert (await agent.prompt(session, "change things"))["stopReason"] == "end_turn"
        assert sorted(p.name for p in root.iterdir()) == ["app.py"]
        assert (root / "app.py").read_text() == 'print("x")\n'
        assert client.permissions == []
        *refused, listed = outcomes(client)
        for outcome in refused:
            assert_refused_as_read_only(outcome)
        assert listed[0] == "completed" and "app.py" in listed[1]
        client.assert_clean()
    assert logged(tmp_path).count("the session is read-only") >= len(refused)


async def test_an_allow_always_of_an_earlier_prompt_does_not_run_in_read_only(
    root: Path, tmp_path: Path
) -> None:
    """A command allowed always in ask mode is refused once the session is read-only."""
    touch = call("bash", command="touch first.txt")
    script = turns({"tool_calls": [touch]}, {"text": "ok"}, {"tool_calls": [touch]}, {"text": "no"})
    client = RecordingClient(capabilities=NOTHING, permission="allow_always")
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        await agent.prompt(session, "touch it")
        assert (root / "first.txt").exists() and len(client.permissions) == 1
        (root / "first.txt").unlink()
        await agent.set_mode(session, "read-only")
        await agent.prompt(session, "again")
        assert not (root / "first.txt").exists()
        assert len(client.permissions) == 1
        assert_refused_as_read_only(outcomes(client)[-1])
        client.assert_clean()


async def test_an_mcp_rule_covers_the_server_of_that_exact_name_only(
    root: Path, tmp_path: Path
) -> None:
    """``autoApprove = ["mcp__notes__*"]`` (ask mode): the tools of the server ``notes`` run
    unasked; those of ``notes..beta`` and ``notes_`` — whose model-facing names start with
    ``mcp__notes__`` — are asked (and here rejected, so never called)."""
    user_files(tmp_path, 'autoApprove = ["mcp__notes__*"]\n')
    names = {"notes": "mcp__notes__write_note"}
    names["notes..beta"] = "mcp__notes__beta__write_note"
    names["notes_"] = "mcp__notes___write_note"
    folders = {name: tmp_path / f"server{i}" for i, name in enumerate(names)}
    script = turns(
        {"tool_calls": [call(tool, text=f"to {server}") for server, tool in names.items()]},
        {"text": "done"},
    )
    client = RecordingClient(capabilities=NOTHING, permission="reject_once")
    async with tether_acp(root, tmp_path, script, client) as agent:
        servers = [notes_server(name, folder) for name, folder in folders.items()]
        session = await agent.new_session(root, mcp_servers=servers)
        assert (await agent.prompt(session, "note it"))["stopReason"] == "end_turn"
        assert {name: called(folder) for name, folder in folders.items()} == {
            "notes": ["write_note"],
            "notes..beta": [],
            "notes_": [],
        }
        asked = [json.dumps(p.tool_call) for p in client.permissions]
        assert len(asked) == 2
        assert "notes..beta" in asked[0] and "notes_" in asked[1]
        client.assert_clean()
