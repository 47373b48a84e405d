"""``tether acp`` driven by the kit's client (the official SDK's client side, every message
checked against the ACP schema): the session lifecycle, streaming, errors and the end."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from .client import RequestError
from .recorder import EDITOR, NOTHING, RecordingClient
from .tether import EOF_WITHIN, call, tether_acp, turns

ANSWER = turns({"text": "Hello from the scripted model, in several pieces."})


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "app.py").write_text('print("x")\n')
    return folder


async def test_initialize_answers_version_one_and_the_capabilities(
    root: Path, tmp_path: Path
) -> None:
    client = RecordingClient(capabilities=EDITOR)
    async with tether_acp(root, tmp_path, ANSWER, client) as agent:
        init = next(
            m.payload["result"]
            for m in client.messages
            if m.direction == "to_client" and "result" in m.payload
        )
        assert init["protocolVersion"] == 1
        caps = init["agentCapabilities"]
        assert caps["loadSession"] is True
        assert caps["promptCapabilities"]["embeddedContext"] is True
        assert "mcpCapabilities" in caps
        assert init["agentInfo"]["name"] == "tether" and init["authMethods"] == []
        session = await agent.new_session(root)
        modes = agent.last_session["modes"]
        assert modes["currentModeId"] == "ask"
        ids = [m["id"] for m in modes["availableModes"]]
        assert ids == ["ask", "accept-edits", "read-only"]
        await agent.set_mode(session, "read-only")
        update = await agent.wait_for_update("current_mode_update", session)
        assert update.update["currentModeId"] == "read-only"
        with pytest.raises(RequestError) as unknown:
            await agent.set_mode(session, "yolo")
        assert unknown.value.code == -32602
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean


async def test_the_answer_streams_in_chunks_before_the_response(root: Path, tmp_path: Path) -> None:
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp(root, tmp_path, ANSWER, client) as agent:
        session = await agent.new_session(root)
        answer = await agent.prompt(session, "say hello")
        assert answer["stopReason"] == "end_turn"
        chunks = [u for u in client.updates if u.kind == "agent_message_chunk"]
        assert len(chunks) >= 3
        assert agent.text(session) == "Hello from the scripted model, in several pieces."
        assert all(u.at_ns < agent.last_answered_ns for u in chunks)
        assert len({u.update["messageId"] for u in chunks}) == 1
        usage = [u.update for u in client.updates if u.kind == "usage_update"]
        assert usage and all(isinstance(u["used"], int) and u["size"] > 0 for u in usage)
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean


async def test_bad_params_are_refused_and_the_agent_keeps_serving(
    root: Path, tmp_path: Path
) -> None:
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp(root, tmp_path, ANSWER, client) as agent:
        bad = [
            ("session/new", {"cwd": "relative/dir", "mcpServers": []}, -32602),
            ("session/new", {"mcpServers": []}, -32602),
            ("session/new", {"cwd": str(root / "missing"), "mcpServers": []}, -32602),
            (
                "session/prompt",
                {"sessionId": "s-nope", "prompt": [{"type": "text", "text": "hi"}]},
                -32602,
            ),
            ("session/set_mode", {"sessionId": "s-nope", "modeId": "ask"}, -32602),
            ("session/load", {"sessionId": "s-nope", "cwd": str(root), "mcpServers": []}, -32602),
            ("tether/nothing", {}, -32601),
        ]
        for method, params, code in bad:
            with pytest.raises(RequestError) as refused:
                await agent.request(method, params, checked=False)
            assert refused.value.code == code, (method, params)
        session = await agent.new_session(root)
        for prompt in (
            "not a list",
            [],
            [{"type": "text"}],
            [{"type": "image", "data": "", "mimeType": "image/png"}],
        ):
            with pytest.raises(RequestError) as refused:
                await agent.request(
                    "session/prompt", {"sessionId": session, "prompt": prompt}, checked=False
                )
            assert refused.value.code == -32602, prompt
        assert (await agent.prompt(session, "still there?"))["stopReason"] == "end_turn"
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean


async def test_limits_are_stop_reasons(root: Path, tmp_path: Path) -> None:
    config = tmp_path / "home" / ".config" / "tether"
    config.mkdir(parents=True)
    (config / "config.toml").write_text("maxSteps = 2\n")
    looping = turns({"text": "again", "tool_calls": [call("list_files")]}, repeat_last=True)
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp(root, tmp_path, looping, client) as agent:
        session = await agent.new_session(root)
        answer = await agent.prompt(session, "loop")
        assert answer["stopReason"] == "max_turn_requests"
        client.assert_clean()


async def test_eof_during_a_turn_ends_the_agent_and_its_command(root: Path, tmp_path: Path) -> None:
    slow = turns({"tool_calls": [call("bash", command="sleep 60")]})
    client = RecordingClient(capabilities=NOTHING, permission="allow_once")
    async with tether_acp(root, tmp_path, slow, client) as agent:
        session = await agent.new_session(root)
        agent.start_prompt(session, "wait")
        await agent.wait_for_update("tool_call_update", session)  # allowed: running
        check = await agent.exit_after_eof(within=EOF_WITHIN)
        assert check.clean, check


async def test_cancel_with_a_permission_pending_withdraws_it(root: Path, tmp_path: Path) -> None:
    edit = turns(
        {"tool_calls": [call("edit_file", path="app.py", old_text='"x"', new_text='"hi"')]},
        {"text": "edited"},
    )
    client = RecordingClient(capabilities=EDITOR, permission="never", after_withdrawal="allow_once")
    async with tether_acp(root, tmp_path, edit, client) as agent:
        session = await agent.new_session(root)
        turn = agent.start_prompt(session, "edit it")
        asked = await agent.wait_for_permission()
        await agent.cancel(session, answer_pending=False)
        answer = await asyncio.wait_for(turn, 1.0)
        assert answer["stopReason"] == "cancelled"
        await client.wait_for(lambda: asked.withdrawn or None, "the withdrawal", 5)
        assert asked.withdrawn
        assert client.writes == [] and (root / "app.py").read_text() == 'print("x")\n'
        # the session takes the next prompt, and this time the edit is allowed
        client.permission = "allow_once"
        answer = await agent.prompt(session, "edit it now")
        assert answer["stopReason"] == "end_turn"
        assert client.writes == [(str(root / "app.py"), 'print("hi")\n')]
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean


async def test_a_client_that_cancels_and_answers_cancelled_ends_the_turn(
    root: Path, tmp_path: Path
) -> None:
    """What the spec asks of a client (Zed): session/cancel, then the pending permission
    answered ``cancelled``; and a second prompt while one runs is refused."""
    edit = turns(
        {"tool_calls": [call("edit_file", path="app.py", old_text='"x"', new_text='"hi"')]},
        {"text": "edited"},
    )
    client = RecordingClient(capabilities=NOTHING, permission="never")
    async with tether_acp(root, tmp_path, edit, client) as agent:
        session = await agent.new_session(root)
        turn = agent.start_prompt(session, "edit it")
        await agent.wait_for_permission()
        with pytest.raises(RequestError) as busy:
            await agent.prompt(session, "and another")
        assert busy.value.code == -32602
        await agent.cancel(session)  # answers the pending permission "cancelled"
        assert (await asyncio.wait_for(turn, 1.0))["stopReason"] == "cancelled"
        assert (root / "app.py").read_text() == 'print("x")\n'
        client.assert_clean()


async def test_settings_that_cannot_be_used_are_a_clear_error_answer(
    root: Path, tmp_path: Path
) -> None:
    client = RecordingClient(capabilities=NOTHING)
    broken = {"TETHER_MAX_MESSAGE_BYTES": "lots"}
    async with tether_acp(root, tmp_path, ANSWER, client, **broken) as agent:  # initialized
        with pytest.raises(RequestError) as refused:
            await agent.new_session(root)
        assert refused.value.code == -32602
        assert "TETHER_MAX_MESSAGE_BYTES" in str(refused.value)
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean


async def test_an_unanswered_permission_is_withdrawn_at_the_approval_timeout(
    root: Path, tmp_path: Path
) -> None:
    edit = turns(
        {"tool_calls": [call("edit_file", path="app.py", old_text='"x"', new_text='"hi"')]},
        {"text": "it timed out"},
    )
    client = RecordingClient(capabilities=EDITOR, permission="never", after_withdrawal="allow_once")
    timeout = {"TETHER_APPROVAL_TIMEOUT_SECONDS": "1"}
    async with tether_acp(root, tmp_path, edit, client, **timeout) as agent:
        session = await agent.new_session(root)
        answer = await agent.prompt(session, "edit it")
        assert answer["stopReason"] == "end_turn"  # the turn went on without the edit
        [asked] = client.permissions
        assert asked.withdrawn
        failed = [u.update for u in client.updates if u.update.get("status") == "failed"]
        assert len(failed) == 1 and "withdrawn" in failed[0]["content"][0]["content"]["text"]
        assert client.writes == [] and (root / "app.py").read_text() == 'print("x")\n'
        client.assert_clean()
