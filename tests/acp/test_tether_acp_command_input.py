"""``commandInput = "ask"`` through the real ``tether acp``: a ``bash`` command's question
goes to the client as the spec's form elicitation tied to the ``bash`` call; an answer is
typed into the command, a declined question ends it naming what it asked. Every message is
checked against the ACP schema by the kit's client."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .recorder import Capabilities, RecordingClient
from .tether import EOF_WITHIN, call, tether_acp, turns

ASKS = Capabilities(read=False, write=False, terminal=False, elicitation=True)


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "work"
    root.mkdir()
    config = tmp_path / "home" / ".config" / "tether"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('commandInput = "ask"\nautoApprove = ["bash"]\n')
    return root


def _output(client: RecordingClient) -> str:
    [done] = [
        u.update
        for u in client.updates
        if u.kind == "tool_call_update" and u.update.get("status") in ("completed", "failed")
    ]
    output = done["rawOutput"]["output"]
    assert isinstance(output, str)
    return output


async def _run(tmp_path: Path, command: str, answers: list[dict[str, Any]]) -> RecordingClient:
    root = _root(tmp_path)
    queue = iter(answers)
    client = RecordingClient(capabilities=ASKS, elicit=lambda params: next(queue))
    bash = call("bash", command=command, timeout_seconds=600)
    async with tether_acp(
        root, tmp_path, turns({"tool_calls": [bash]}, {"text": "ok"}), client
    ) as agent:
        session = await agent.new_session(root)
        answer = await agent.prompt(session, "go")
        assert answer["stopReason"] == "end_turn"
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean
    return client


async def test_a_commands_question_is_elicited_and_answered(tmp_path: Path) -> None:
    client = await _run(
        tmp_path,
        'read -p "Continue? " x; echo "got=$x"',
        [{"action": "accept", "content": {"answer": "yes"}}],
    )
    [asked] = client.elicitations
    [tool_call] = [u.update for u in client.updates if u.kind == "tool_call"]
    assert asked["toolCallId"] == tool_call["toolCallId"]
    assert "Continue? " in asked["message"]
    # An empty form is Enter alone: the field is optional, its title says so.
    assert asked["requestedSchema"]["required"] == []
    assert asked["requestedSchema"]["properties"]["answer"]["title"] == (
        "Your answer (empty: Enter alone)"
    )
    assert "got=yes" in _output(client)


@pytest.mark.parametrize("content", [{"answer": ""}, {}], ids=["empty answer", "no answer field"])
async def test_a_form_submitted_empty_is_enter_alone(
    tmp_path: Path, content: dict[str, Any]
) -> None:
    client = await _run(
        tmp_path,
        'read -p "Install? [Y/n] " x; echo "got=[${x:-Y}]"',
        [{"action": "accept", "content": content}],
    )
    assert len(client.elicitations) == 1
    output = _output(client)
    assert "got=[Y]" in output, output


async def test_a_declined_question_ends_the_command(tmp_path: Path) -> None:
    client = await _run(
        tmp_path, 'read -s -p "Password: " x; echo "got=$x"', [{"action": "decline"}]
    )
    [asked] = client.elicitations
    field = asked["requestedSchema"]["properties"]["answer"]
    # No hidden field: the title says so.
    assert field["title"] == "Password (this form shows what you type; empty: Enter alone)"
    output = _output(client)
    assert "the command waited for input: `Password: `" in output, output
    assert "got=" not in output
