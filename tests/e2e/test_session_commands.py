"""``agent/commands`` and ``agent/command`` through a real ``tether serve``, as any front
(the chat, an editor, an ACP front) uses them: the list, then each command on a session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tether.client.connection import ServerError
from tether.client.headless import connect

from .conftest import script


def _options(tmp_path: Path, *turns: dict[str, Any]) -> dict[str, Any]:
    return {
        "provider": "scripted",
        "script": script(*turns),
        "stateDir": str(tmp_path / "state"),
        "autoApprove": ["write_file"],
    }


async def test_the_list_names_each_session_command_once(workspace: Path, tmp_path: Path) -> None:
    async with connect(workspace, _options(tmp_path, {"text": "hi"})) as client:
        listed = await client.request("agent/commands", {})
    names = [c["name"] for c in listed["commands"]]
    assert names == ["undo", "new", "model", "cost"]
    model = next(c for c in listed["commands"] if c["name"] == "model")
    assert model["argument"] == "[NAME]" and model["description"]


async def test_undo_puts_back_the_sessions_last_run_and_cost_counts_its_runs(
    workspace: Path, tmp_path: Path
) -> None:
    target = workspace / "notes.txt"
    target.write_text("old\n")
    write = {
        "toolCalls": [
            {"name": "write_file", "arguments": {"path": "notes.txt", "content": "new\n"}}
        ]
    }
    async with connect(workspace, _options(tmp_path, write, {"text": "done"})) as client:
        ran = await client.run("rewrite notes")
        assert target.read_text() == "new\n"
        session = ran["sessionId"]
        undone = await client.request("agent/command", {"name": "undo", "sessionId": session})
        assert target.read_text() == "old\n"
        assert undone["files"] == [target.as_uri()] and "put back: notes.txt" in undone["message"]
        again = await client.request("agent/command", {"name": "undo", "sessionId": session})
        assert again["message"].startswith("nothing to undo") and again["files"] == []
        cost = await client.request("agent/command", {"name": "cost", "sessionId": session})
        assert cost["message"].startswith(f"session {session}: 1 run · ")
        new = await client.request("agent/command", {"name": "new", "sessionId": session})
        assert new["newSession"] is True


async def test_model_picks_the_model_of_later_runs(workspace: Path, tmp_path: Path) -> None:
    async with connect(workspace, _options(tmp_path, {"text": "hi"})) as client:
        shown = await client.request("agent/command", {"name": "model"})
        assert shown["message"].startswith("model: ")
        picked = await client.request("agent/command", {"name": "model", "argument": "tiny"})
        assert picked["message"] == "model: tiny from the next message on"
        after = await client.request("agent/command", {"name": "model"})
        assert after["message"].startswith("model: tiny (scripted)")


async def test_an_unknown_command_or_session_is_a_clear_error(
    workspace: Path, tmp_path: Path
) -> None:
    async with connect(workspace, _options(tmp_path, {"text": "hi"})) as client:
        with pytest.raises(ServerError) as unknown:
            await client.request("agent/command", {"name": "frobnicate"})
        assert "no command 'frobnicate'" in unknown.value.message
        assert "undo, new, model, cost" in unknown.value.message
        with pytest.raises(ServerError) as session:
            await client.request("agent/command", {"name": "cost", "sessionId": "s-nope"})
        assert "unknown session 's-nope'" in session.value.message
