"""``tether acp``'s tool calls: what the editor is shown, asked and given, for a client
that declares fs + terminal and for one that declares nothing."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest

from .client import RequestError
from .recorder import EDITOR, NOTHING, RecordingClient
from .tether import EOF_WITHIN, call, tether_acp, turns

EDIT = call("edit_file", path="app.py", old_text='"x"', new_text='"hi"')
READ_EDIT_ANSWER = turns(
    {"text": "Reading.", "tool_calls": [call("read_file", path="app.py")]},
    {"tool_calls": [EDIT]},
    {"text": "It says hi now."},
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    (folder / "app.py").write_text('print("x")\n')
    return folder


def calls(client: RecordingClient, kind: str) -> list[dict]:
    return [u.update for u in client.updates if u.kind == kind]


async def test_a_full_client_is_read_asked_and_written_through(root: Path, tmp_path: Path) -> None:
    app = str(root / "app.py")
    client = RecordingClient(capabilities=EDITOR, buffers={app: 'print("x")  # unsaved\n'})
    async with tether_acp(root, tmp_path, READ_EDIT_ANSWER, client) as agent:
        session = await agent.new_session(root)
        answer = await agent.prompt(session, "make it say hi")
        assert answer["stopReason"] == "end_turn"
        read, edit = calls(client, "tool_call")
        assert (read["kind"], read["title"], read["status"]) == ("read", "Read app.py", "pending")
        assert read["locations"] == [{"path": app}] and read["rawInput"] == {"path": "app.py"}
        assert (edit["kind"], edit["title"]) == ("edit", "Edit app.py")
        done = {u["toolCallId"]: u for u in calls(client, "tool_call_update") if "rawOutput" in u}
        # the model read the editor's unsaved text, not the disk
        assert "# unsaved" in done[read["toolCallId"]]["content"][0]["content"]["text"]
        [asked] = client.permissions
        assert asked.tool_call_id == edit["toolCallId"]
        assert asked.kinds == ["allow_once", "allow_always", "reject_once"]
        [diff] = asked.tool_call["content"]
        assert diff == {
            "type": "diff",
            "path": app,
            "oldText": 'print("x")  # unsaved\n',
            "newText": 'print("hi")  # unsaved\n',
        }
        finished = done[edit["toolCallId"]]
        assert finished["status"] == "completed" and finished["content"][0] == diff
        # written through the editor (its buffer), the disk left to the editor
        assert client.writes == [(app, 'print("hi")  # unsaved\n')]
        assert (root / "app.py").read_text() == 'print("x")\n'
        assert app in client.reads
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean


async def test_an_approved_edit_reads_the_file_for_the_change_and_the_write_only(
    root: Path, tmp_path: Path
) -> None:
    """The question carries the change as the tool computed it: showing the whole-file diff
    reads nothing; the file is read to compute the edit and once more before writing (the
    user may have typed meanwhile)."""
    app = str(root / "app.py")
    client = RecordingClient(capabilities=EDITOR, buffers={app: 'print("x")  # unsaved\n'})
    answer = turns({"tool_calls": [EDIT]}, {"text": "Done."})
    async with tether_acp(root, tmp_path, answer, client) as agent:
        session = await agent.new_session(root)
        assert (await agent.prompt(session, "make it say hi"))["stopReason"] == "end_turn"
        [asked] = client.permissions
        assert asked.tool_call["content"][0]["newText"] == 'print("hi")  # unsaved\n'
        assert client.writes == [(app, 'print("hi")  # unsaved\n')]
        assert client.reads.count(app) == 2
        client.assert_clean()


async def test_a_client_declaring_nothing_gets_the_disk_and_tethers_writer(
    root: Path, tmp_path: Path
) -> None:
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp(root, tmp_path, READ_EDIT_ANSWER, client) as agent:
        session = await agent.new_session(root)
        assert (await agent.prompt(session, "make it say hi"))["stopReason"] == "end_turn"
        [asked] = client.permissions
        assert asked.tool_call["content"][0]["oldText"] == 'print("x")\n'
        assert (root / "app.py").read_text() == 'print("hi")\n'
        assert client.reads == [] and client.writes == []
        client.assert_clean()  # an undeclared fs/* or terminal/* call is a problem here
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean


async def test_a_new_file_is_shown_with_no_old_text(root: Path, tmp_path: Path) -> None:
    script = turns({"tool_calls": [call("write_file", path="new.txt", content="fresh\n")]})
    client = RecordingClient(capabilities=EDITOR)
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        await agent.prompt(session, "create it")
        [asked] = client.permissions
        [diff] = asked.tool_call["content"]
        assert diff["oldText"] is None and diff["newText"] == "fresh\n"
        assert diff["path"] == str(root / "new.txt")
        assert client.writes == [(str(root / "new.txt"), "fresh\n")]
        client.assert_clean()


async def test_a_rejected_edit_fails_the_call_and_the_turn_goes_on(
    root: Path, tmp_path: Path
) -> None:
    client = RecordingClient(capabilities=EDITOR, permission="reject_once")
    async with tether_acp(root, tmp_path, READ_EDIT_ANSWER, client) as agent:
        session = await agent.new_session(root)
        answer = await agent.prompt(session, "make it say hi")
        assert answer["stopReason"] == "end_turn"
        failed = [u for u in calls(client, "tool_call_update") if u.get("status") == "failed"]
        [edit] = failed
        told = edit["content"][0]["content"]["text"]
        assert "denied" in told and "nothing was changed" in told
        assert agent.text(session).endswith("It says hi now.")  # the model went on
        assert client.writes == [] and (root / "app.py").read_text() == 'print("x")\n'
        client.assert_clean()


async def test_allow_always_is_the_servers_suggested_rule_for_the_session(
    root: Path, tmp_path: Path
) -> None:
    second = call("edit_file", path="app.py", old_text='"hi"', new_text='"bye"')
    script = turns({"tool_calls": [EDIT]}, {"tool_calls": [second]}, {"text": "done"})
    client = RecordingClient(capabilities=NOTHING, permission="allow_always")
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        await agent.prompt(session, "twice")
        [asked] = client.permissions  # the second edit of the file was not asked
        option = asked.option("allow_always")
        assert option is not None and "app.py" in option["name"]
        assert (root / "app.py").read_text() == 'print("bye")\n'
        client.assert_clean()


async def test_a_sensitive_file_offers_no_allow_always(root: Path, tmp_path: Path) -> None:
    script = turns({"tool_calls": [call("write_file", path=".env", content="KEY=1\n")]})
    client = RecordingClient(capabilities=NOTHING, permission="allow_always")
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        await agent.prompt(session, "write it")
        [asked] = client.permissions
        assert "allow_always" not in asked.kinds and asked.missing == "allow_always"
        assert not (root / ".env").exists()
        client.assert_clean()


async def test_modes_accept_edits_and_read_only(root: Path, tmp_path: Path) -> None:
    script = turns({"tool_calls": [EDIT]}, {"text": "done"})
    client = RecordingClient(capabilities=NOTHING, permission="allow_once")
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        await agent.set_mode(session, "read-only")
        await agent.prompt(session, "edit")
        assert client.permissions == [] and (root / "app.py").read_text() == 'print("x")\n'
        [failed] = [u for u in calls(client, "tool_call_update") if u.get("status") == "failed"]
        await agent.set_mode(session, "accept-edits")
        await agent.prompt(session, "edit")
        assert client.permissions == [] and (root / "app.py").read_text() == 'print("hi")\n'
        client.assert_clean()


async def test_a_command_is_asked_with_kind_execute_and_the_exact_command(
    root: Path, tmp_path: Path
) -> None:
    script = turns({"tool_calls": [call("bash", command="echo made > out.txt")]}, {"text": "ok"})
    client = RecordingClient(capabilities=NOTHING, permission="allow_once")
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        await agent.prompt(session, "run it")
        [asked] = client.permissions
        assert asked.tool_call["kind"] == "execute"
        assert asked.tool_call["rawInput"]["command"] == "echo made > out.txt"
        assert "echo made > out.txt" in asked.tool_call["title"]
        assert (root / "out.txt").read_text() == "made\n"
        assert client.terminals.created == []  # not declared: Tether's runner ran it
        client.assert_clean()


async def test_prompt_context_blocks_reach_the_model(root: Path, tmp_path: Path) -> None:
    (root / "notes.md").write_text("on disk\n")
    script = turns({"text": "seen"})
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        link = {"type": "resource_link", "uri": (root / "app.py").as_uri(), "name": "app.py"}
        embedded = {
            "type": "resource",
            "resource": {"uri": (root / "notes.md").as_uri(), "text": "unsaved notes\n"},
        }
        answer = await agent.prompt(session, "look at", link, "and", embedded)
        assert answer["stopReason"] == "end_turn"
        client.assert_clean()
    sessions = tmp_path / "sessions"
    log = "".join(p.read_text() for p in sessions.rglob("*.jsonl"))
    assert "look at @app.py and @notes.md" in log
    assert "unsaved notes" in log and 'print(\\"x\\")' in log  # attached for the model


async def test_an_allowed_command_runs_in_the_editors_terminal(root: Path, tmp_path: Path) -> None:
    script = turns({"tool_calls": [call("bash", command="echo from-terminal; exit 3")]})
    client = RecordingClient(capabilities=EDITOR, permission="allow_once")
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        assert (await agent.prompt(session, "run it"))["stopReason"] == "end_turn"
        [terminal] = client.terminals.created
        assert terminal.released
        embedded = [
            c
            for u in calls(client, "tool_call_update")
            for c in u.get("content") or []
            if c["type"] == "terminal"
        ]
        assert embedded == [{"type": "terminal", "terminalId": terminal.terminal_id}]
        [done] = [u for u in calls(client, "tool_call_update") if "rawOutput" in u]
        assert done["status"] == "failed"
        told = done["content"][0]["content"]["text"]
        assert "exit code: 3" in told and "from-terminal" in told
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean


async def test_cancel_kills_and_releases_the_editors_terminal(root: Path, tmp_path: Path) -> None:
    script = turns({"tool_calls": [call("bash", command="sleep 60")]})
    client = RecordingClient(capabilities=EDITOR, permission="allow_once")
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        turn = agent.start_prompt(session, "wait")
        await client.wait_for(lambda: client.terminals.created or None, "a terminal", 20)
        await agent.cancel(session)
        assert (await asyncio.wait_for(turn, 2.0))["stopReason"] == "cancelled"
        [terminal] = client.terminals.created
        await client.wait_for(lambda: terminal.released or None, "the release", 5)
        client.assert_clean()


async def test_the_models_plan_is_a_plan_update(root: Path, tmp_path: Path) -> None:
    steps = [
        {"content": "read app.py", "status": "completed", "priority": "high"},
        {"content": "make it say hi", "status": "in_progress"},
    ]
    script = turns({"tool_calls": [call("plan", steps=steps)]}, {"text": "planned"})
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        assert (await agent.prompt(session, "plan it"))["stopReason"] == "end_turn"
        [plan] = calls(client, "plan")
        assert plan["entries"] == [
            {"content": "read app.py", "priority": "high", "status": "completed"},
            {"content": "make it say hi", "priority": "medium", "status": "in_progress"},
        ]
        [tool] = calls(client, "tool_call")
        assert (tool["kind"], tool["title"]) == ("think", "Plan")
        client.assert_clean()


def tiny_mcp(calls_file: Path, name: str = "notes") -> dict[str, object]:
    """An ACP ``McpServer`` (stdio) running ``tiny_mcp.py``."""
    return {
        "name": name,
        "command": sys.executable,
        "args": [str(Path(__file__).with_name("tiny_mcp.py"))],
        "env": [{"name": "TINY_MCP_CALLS", "value": str(calls_file)}],
    }


async def test_the_clients_mcp_servers_run_for_the_session_and_are_asked(
    root: Path, tmp_path: Path
) -> None:
    echo = call("mcp__notes__echo", text="from the editor")
    script = turns({"tool_calls": [echo]}, {"text": "no"}, {"tool_calls": [echo]}, {"text": "ok"})
    calls_file = tmp_path / "calls.txt"
    client = RecordingClient(capabilities=NOTHING, permission="reject_once")
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root, mcp_servers=[tiny_mcp(calls_file)])
        assert (await agent.prompt(session, "echo it"))["stopReason"] == "end_turn"
        [asked] = client.permissions  # asked, like any call with effects
        title = asked.tool_call["title"]  # with its arguments: some clients show only this
        assert "notes" in title and "echo" in title and '"from the editor"' in title
        assert not calls_file.exists()  # rejected: the server was never called
        client.permission = "allow_once"
        assert (await agent.prompt(session, "again"))["stopReason"] == "end_turn"
        assert calls_file.read_text() == "from the editor\n"
        assert len(client.permissions) == 2  # asked again: an allow once is for one call
        done = [u for u in calls(client, "tool_call_update") if u.get("status") == "completed"]
        assert any("echo: from the editor" in json.dumps(u) for u in done)
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean  # its server ended too


async def test_acp_files_disk_reads_and_writes_the_disk_though_the_client_offers_fs(
    root: Path, tmp_path: Path
) -> None:
    # avante.nvim offers fs methods that cannot be turned off and drop a final newline:
    # with `TETHER_ACP_FILES=disk` (the acpFiles setting) Tether does the files itself.
    app = str(root / "app.py")
    client = RecordingClient(
        capabilities=EDITOR, buffers={app: "typed, unsaved\n"}, permission="allow_once"
    )
    async with tether_acp(
        root, tmp_path, READ_EDIT_ANSWER, client, TETHER_ACP_FILES="disk"
    ) as agent:
        session = await agent.new_session(root)
        assert (await agent.prompt(session, "make it say hi"))["stopReason"] == "end_turn"
        assert client.reads == [] and client.writes == []
        assert (root / "app.py").read_text() == 'print("hi")\n'  # from the disk's text
        [asked] = client.permissions  # still asked, with the disk's text in the diff
        assert asked.tool_call["content"][0]["oldText"] == 'print("x")\n'
        client.assert_clean()


async def test_an_mcp_servers_env_as_an_object_is_taken(root: Path, tmp_path: Path) -> None:
    # codecompanion.nvim sends the servers it inherits from its own config with ``env`` (and
    # ``headers``) as an object of strings, not ACP's list of name/value pairs.
    echo = call("mcp__notes__echo", text="from codecompanion")
    calls_file = tmp_path / "calls.txt"
    server = {**tiny_mcp(calls_file), "env": {"TINY_MCP_CALLS": str(calls_file)}}
    client = RecordingClient(capabilities=NOTHING, permission="allow_once")
    async with tether_acp(
        root, tmp_path, turns({"tool_calls": [echo]}, {"text": "ok"}), client
    ) as agent:
        params = {"cwd": str(root), "mcpServers": [server]}
        created = await agent.request("session/new", params, checked=False)  # off-schema
        session = created["sessionId"]
        assert (await agent.prompt(session, "echo it"))["stopReason"] == "end_turn"
        assert calls_file.read_text() == "from codecompanion\n"
        client.assert_clean()


async def test_an_unusable_mcp_server_is_an_invalid_params_error(
    root: Path, tmp_path: Path
) -> None:
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp(root, tmp_path, turns({"text": "ok"}), client) as agent:
        bad = {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []}
        with pytest.raises(RequestError) as refused:
            await agent.new_session(root, mcp_servers=[bad])
        assert refused.value.code == -32602
        assert "mcpServers.0 ('old'): 'sse' servers are not supported" in str(refused.value)
        assert await agent.new_session(root)  # and the agent goes on serving


async def test_the_session_commands_are_offered_and_run_from_a_prompt(
    root: Path, tmp_path: Path
) -> None:
    edit = call("write_file", path="app.py", content='print("hi")\n')
    script = turns({"tool_calls": [edit]}, {"text": "done"})  # each run plays it from the top
    client = RecordingClient(capabilities=NOTHING, permission="allow_once")
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root)
        offered = await agent.wait_for_update("available_commands_update", session)
        names = [c["name"] for c in offered.update["availableCommands"]]
        assert names == [
            "undo",
            "rewind",
            "model",
            "effort",
            "compact",
            "cost",
            "jobs",
        ]  # the server's own list, /new the client's
        answered = agent.last_answered_ns  # offered after session/new was answered
        assert offered.at_ns > answered
        nothing = len(client.updates)
        assert (await agent.prompt(session, "/undo"))["stopReason"] == "end_turn"
        assert "nothing to undo" in "".join(u.text() for u in client.updates[nothing:])
        await agent.prompt(session, "make it say hi")
        assert (root / "app.py").read_text() == 'print("hi")\n'
        before = len(client.updates)
        assert (await agent.prompt(session, "/undo"))["stopReason"] == "end_turn"
        said = "".join(u.text() for u in client.updates[before:])
        assert "put back: app.py" in said, said
        assert (root / "app.py").read_text() == 'print("x")\n'  # reverted on disk
        before = len(client.updates)
        await agent.prompt(session, "/cost")
        assert "1 run" in "".join(u.text() for u in client.updates[before:])
        before = len(client.updates)
        await agent.prompt(session, "/unknown thing")  # not ours: the model reads it
        assert any(u.kind == "tool_call" for u in client.updates[before:])  # a run, a call
        client.assert_clean()
