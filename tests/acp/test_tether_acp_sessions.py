"""``session/load`` in a new ``tether acp`` process, and MCP servers a client names."""

from __future__ import annotations

from pathlib import Path

from ..waiting import wait_until
from .recorder import EDITOR, NOTHING, RecordingClient
from .tether import EOF_WITHIN, call, tether_acp, turns


async def test_load_in_a_new_process_replays_then_continues(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    (root / "app.py").write_text('print("x")\n')
    script = turns(
        {"text": "Reading it.", "tool_calls": [call("read_file", path="app.py")]},
        {"tool_calls": [call("edit_file", path="app.py", old_text='"x"', new_text='"hi"')]},
        {"text": "Now it says hi."},
    )
    first = RecordingClient(capabilities=NOTHING, permission="allow_once")
    async with tether_acp(root, tmp_path, script, first) as agent:
        session = await agent.new_session(root)
        await agent.prompt(session, "make it say hi")
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean
    live_calls = [u.update["toolCallId"] for u in first.updates if u.kind == "tool_call"]

    second = RecordingClient(capabilities=EDITOR, permission="allow_once")
    follow_up = turns({"text": "Still here."})
    async with tether_acp(root, tmp_path, follow_up, second) as agent:
        answer = await agent.load_session(session, root)
        loaded_ns = agent.last_answered_ns
        assert answer["modes"]["currentModeId"] == "ask"
        offered = await agent.wait_for_update("available_commands_update", session)
        assert offered.at_ns > loaded_ns  # the commands once the load is answered
        replay = [u for u in second.updates if u.session_id == session and u != offered]
        assert replay and all(u.at_ns < loaded_ns for u in replay)
        kinds = [u.kind for u in replay]
        assert kinds[0] == "user_message_chunk"
        assert replay[0].text() == "make it say hi"
        assert agent.text(session) == "Reading it.Now it says hi."
        replayed_calls = [u.update for u in replay if u.kind == "tool_call"]
        assert [c["toolCallId"] for c in replayed_calls] == live_calls
        assert [c["kind"] for c in replayed_calls] == ["read", "edit"]
        final = {
            u.update["toolCallId"]: u.update["status"]
            for u in replay
            if u.kind == "tool_call_update"
        }
        assert final == dict.fromkeys(live_calls, "completed")
        # the next prompt continues that history
        assert (await agent.prompt(session, "are you there?"))["stopReason"] == "end_turn"
        assert agent.text(session).endswith("Still here.")
        second.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean
    logs = list((tmp_path / "sessions").rglob(f"{session}*.jsonl"))
    assert logs and "are you there?" in "".join(p.read_text() for p in logs)


async def test_an_mcp_server_that_cannot_start_is_one_warning_and_the_turn_goes_on(
    tmp_path: Path,
) -> None:
    root = tmp_path / "work"
    root.mkdir()
    client = RecordingClient(capabilities=NOTHING)
    servers = [{"name": "notes", "command": "/bin/false", "args": [], "env": []}]
    stderr = tmp_path / "stderr.txt"
    async with tether_acp(
        root, tmp_path, turns({"text": "ok"}), client, stderr_path=stderr
    ) as agent:
        session = await agent.new_session(root, mcp_servers=servers)
        assert (await agent.prompt(session, "hi"))["stopReason"] == "end_turn"
        client.assert_clean()
        # (its start may fail after the turn on a loaded machine: the warning comes then)
        await wait_until(lambda: "MCP server 'notes'" in stderr.read_text(), "the warning")
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean
    said = [line for line in stderr.read_text().splitlines() if "MCP server 'notes'" in line]
    assert len(said) == 1, stderr.read_text()  # once, naming it
