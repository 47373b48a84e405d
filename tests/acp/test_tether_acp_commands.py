"""ACP's available commands are the session commands of ``run/commands.py``, all but
``/new`` (a new thread is the client's ``session/new``): a command added to ``COMMANDS``
is offered, and run from a prompt, with no edit of the ACP front."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.acp import server as acp_server
from tether.run import commands
from tether_protocol import CommandResult, SessionCommand

from .recorder import NOTHING, RecordingClient
from .tether import EOF_WITHIN, tether_acp, turns


def test_a_command_added_to_the_table_is_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    async def hello(host: object, params: object) -> CommandResult:
        return CommandResult(message="hello")

    added = SessionCommand(name="hello", description="say hello", argument="[NAME]")
    monkeypatch.setitem(commands.COMMANDS, "hello", (added, hello))
    offered = acp_server.available_commands()
    assert offered["sessionUpdate"] == "available_commands_update"
    names = [c["name"] for c in offered["availableCommands"]]
    assert names == [n for n in commands.COMMANDS if n != "new"]
    assert "hello" in names and "new" not in names
    [item] = [c for c in offered["availableCommands"] if c["name"] == "hello"]
    assert item == {"name": "hello", "description": "say hello", "input": {"hint": "NAME"}}
    assert acp_server.acp_command("hello")  # and a prompt /hello runs it
    assert not acp_server.acp_command("new")


async def test_the_offered_commands_are_the_session_commands(
    tmp_path: Path,
) -> None:
    root = tmp_path / "work"
    root.mkdir()
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp(root, tmp_path, turns({"text": "ok"}), client) as agent:
        session = await agent.new_session(root)
        offered = await agent.wait_for_update("available_commands_update", session)
        names = [c["name"] for c in offered.update["availableCommands"]]
        assert names == [name for name in commands.COMMANDS if name != "new"]
        for name in names:  # each described as the table describes it
            command, _ = commands.COMMANDS[name]
            [item] = [c for c in offered.update["availableCommands"] if c["name"] == name]
            assert item["description"] == command.description
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean
