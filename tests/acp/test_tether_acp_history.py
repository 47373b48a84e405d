"""Session history through ACP: ``session/list`` (the cwd filter and cursor paging),
``session_info_update``, ``session/resume`` without replay, ``session/close``,
``session/delete`` and ``additionalDirectories`` — against the real ``tether acp``, every
message checked against the vendored schema."""

from __future__ import annotations

import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from .client import RequestError
from .process import alive, descendants
from .recorder import NOTHING, RecordingClient
from .tether import EOF_WITHIN, call, tether_acp, turns

PAGE = 20
"""The page size ``tether acp`` answers ``session/list`` with."""


def _folder(parent: Path, name: str) -> Path:
    folder = parent / name
    folder.mkdir()
    return folder


async def _listed(agent: Any, **params: Any) -> dict[str, Any]:
    return dict(await agent.request("session/list", params))


def _cmdline(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def _infos(client: RecordingClient, session: str) -> list[dict[str, Any]]:
    return [
        u.update
        for u in client.updates
        if u.kind == "session_info_update" and u.session_id == session
    ]


async def test_sessions_are_listed_by_folder_titled_resumed_closed_and_deleted(
    tmp_path: Path,
) -> None:
    one, two = _folder(tmp_path, "one"), _folder(tmp_path, "two")
    script = turns({"text": "Done."})
    first = RecordingClient(capabilities=NOTHING)
    async with tether_acp(one, tmp_path, script, first) as agent:
        capabilities = (await agent.initialize())["agentCapabilities"]["sessionCapabilities"]
        assert set(capabilities) >= {"list", "resume", "close", "delete", "additionalDirectories"}
        assert await _listed(agent) == {"sessions": []}

        a = await agent.new_session(one)
        answered = await agent.prompt(a, "fix the\x1b[31m parser\nplease")
        assert answered["stopReason"] == "end_turn"
        [info] = _infos(first, a)  # before the answer: the title from the first prompt
        assert info["title"] == "fix the\\x1b[31m parser please"  # shown escaped, one line
        datetime.fromisoformat(info["updatedAt"])
        await agent.prompt(a, "and the tests")
        later = _infos(first, a)[1]
        assert "title" not in later and later["updatedAt"] >= info["updatedAt"]

        b = await agent.new_session(two)
        await agent.prompt(b, "second folder")
        listed = await _listed(agent)
        assert [s["sessionId"] for s in listed["sessions"]] == [b, a]  # the latest first
        assert "nextCursor" not in listed
        [only] = (await _listed(agent, cwd=str(one)))["sessions"]
        assert only["sessionId"] == a and only["cwd"] == str(one.resolve())
        assert only["title"] == "fix the\\x1b[31m parser please"
        datetime.fromisoformat(only["updatedAt"])
        assert (await _listed(agent, cwd=str(tmp_path)))["sessions"] == []
        with pytest.raises(RequestError) as relative:
            await agent.request("session/list", {"cwd": "one"}, checked=False)
        assert relative.value.code == -32602 and "absolute" in str(relative.value)
        first.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean

    second = RecordingClient(capabilities=NOTHING)
    async with tether_acp(one, tmp_path, turns({"text": "Still here."}), second) as agent:
        [found] = (await _listed(agent, cwd=str(one)))["sessions"]
        assert found["sessionId"] == a
        answer = await agent.request(
            "session/resume", {"sessionId": a, "cwd": str(one), "mcpServers": []}
        )
        resumed_ns = agent.last_answered_ns
        assert answer["modes"]["currentModeId"] == "ask"
        assert {o["id"] for o in answer["configOptions"]} >= {"mode", "model"}
        # no replay: nothing of the conversation before or after the answer
        assert [u for u in second.updates if u.at_ns < resumed_ns] == []
        await agent.prompt(a, "are you there?")
        assert agent.text(a) == "Still here."
        kinds = {u.kind for u in second.updates}
        assert "user_message_chunk" not in kinds and "tool_call" not in kinds
        with pytest.raises(RequestError) as unknown:
            await agent.request(
                "session/resume", {"sessionId": "s-nope", "cwd": str(one)}, checked=False
            )
        assert unknown.value.code == -32602 and "s-nope" in str(unknown.value)

        assert await agent.request("session/close", {"sessionId": a}) == {}
        with pytest.raises(RequestError) as closed:
            await agent.prompt(a, "after the close")
        assert closed.value.code == -32602
        with pytest.raises(RequestError) as twice:
            await agent.request("session/close", {"sessionId": a})
        assert twice.value.code == -32602

        assert await agent.request("session/delete", {"sessionId": b}) == {}
        assert await agent.request("session/delete", {"sessionId": "s-never"}) == {}
        assert [s["sessionId"] for s in (await _listed(agent))["sessions"]] == [a]
        second.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean
    logs = {p.name for p in (tmp_path / "sessions").rglob("*.jsonl")}
    assert f"{a}.jsonl" in logs and f"{b}.jsonl" not in logs
    assert "are you there?" in (tmp_path / "sessions" / "sessions" / f"{a}.jsonl").read_text()


async def test_the_list_is_paged_with_an_opaque_cursor(tmp_path: Path) -> None:
    root = _folder(tmp_path, "work")
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp(root, tmp_path, turns({"text": "ok"}), client) as agent:
        made = []
        for n in range(PAGE + 3):
            session = await agent.new_session(root)
            await agent.prompt(session, f"task {n}")
            made.append(session)
        page = await _listed(agent, cwd=str(root))
        assert len(page["sessions"]) == PAGE and page["nextCursor"]
        rest = await _listed(agent, cwd=str(root), cursor=page["nextCursor"])
        assert len(rest["sessions"]) == 3 and "nextCursor" not in rest
        seen = [s["sessionId"] for s in page["sessions"] + rest["sessions"]]
        assert seen == made[::-1]
        with pytest.raises(RequestError) as bad:
            await agent.request("session/list", {"cursor": "not-a-cursor"}, checked=False)
        assert bad.value.code == -32602 and "cursor" in str(bad.value)
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean


async def test_additional_directories_are_roots_under_the_same_confinement(
    tmp_path: Path,
) -> None:
    root, extra, outside = (_folder(tmp_path, n) for n in ("work", "lib", "outside"))
    (extra / "util.py").write_text("SHARED = 1\n")
    (outside / "secret.txt").write_text("not yours\n")
    script = turns(
        {
            "tool_calls": [
                call("read_file", path=str(extra / "util.py")),
                call("read_file", path=str(outside / "secret.txt")),
            ]
        },
        {"text": "Read."},
    )
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp(root, tmp_path, script, client) as agent:
        for bad in (["lib"], [str(tmp_path / "missing")], ["/"]):
            with pytest.raises(RequestError) as refused:
                await agent.request(
                    "session/new",
                    {"cwd": str(root), "mcpServers": [], "additionalDirectories": bad},
                    checked=False,
                )
            assert refused.value.code == -32602
            assert "additionalDirectories" in str(refused.value)
        session = await agent.new_session(root, additionalDirectories=[str(extra)])
        await agent.prompt(session, "read both")
        results = {
            u.update["toolCallId"]: u.update
            for u in client.updates
            if u.kind == "tool_call_update" and "rawOutput" in u.update
        }
        shared, secret = results.values()
        assert shared["status"] == "completed" and "SHARED = 1" in shared["rawOutput"]["output"]
        assert secret["status"] == "failed" and "outside the workspace" in str(secret["rawOutput"])
        [listed] = (await _listed(agent))["sessions"]
        assert listed["additionalDirectories"] == [str(extra.resolve())]
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean


async def test_close_ends_the_prompt_and_the_sessions_servers_before_it_answers(
    tmp_path: Path,
) -> None:
    root = _folder(tmp_path, "work")
    (root / "app.py").write_text("x = 1\n")
    server = {
        "name": "notes",
        "command": sys.executable,
        "args": [str(Path(__file__).with_name("tiny_mcp.py"))],
        "env": [{"name": "TINY_MCP_CALLS", "value": str(tmp_path / "calls.txt")}],
    }
    script = turns(
        {"tool_calls": [call("mcp__notes__echo", text="hi")]},
        {"tool_calls": [call("edit_file", path="app.py", old_text="x = 1", new_text="x = 2")]},
    )
    client = RecordingClient(
        capabilities=NOTHING,
        permission=lambda asked: "allow_once" if "notes" in str(asked.tool_call) else "never",
    )
    async with tether_acp(root, tmp_path, script, client) as agent:
        session = await agent.new_session(root, mcp_servers=[server])
        turn = agent.start_prompt(session, "echo, then edit")
        await client.wait_for(
            lambda: next((p for p in client.permissions if p.pending), None),
            "the edit's permission",
            30.0,
        )
        servers = [pid for pid in descendants(agent.process.pid) if "tiny_mcp.py" in _cmdline(pid)]
        assert servers  # the session's server runs (it answered the echo)
        assert await agent.request("session/close", {"sessionId": session}) == {}
        assert turn.done() and (await turn)["stopReason"] == "cancelled"
        assert [p for p in servers if alive(p)] == []  # ended before the answer
        assert (root / "app.py").read_text() == "x = 1\n"
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean


async def test_a_session_open_in_another_process_is_not_deleted(tmp_path: Path) -> None:
    root = _folder(tmp_path, "work")
    first, second = RecordingClient(capabilities=NOTHING), RecordingClient(capabilities=NOTHING)
    async with tether_acp(root, tmp_path, turns({"text": "ok"}), first) as holder:
        session = await holder.new_session(root)
        await holder.prompt(session, "keep me")
        async with tether_acp(root, tmp_path, turns({"text": "ok"}), second) as other:
            with pytest.raises(RequestError) as busy:
                await other.request("session/delete", {"sessionId": session})
            assert busy.value.code == -32602 and "open" in str(busy.value)
            [listed] = (await _listed(other))["sessions"]
            assert listed["sessionId"] == session
            second.assert_clean()
            assert (await other.exit_after_eof(within=EOF_WITHIN)).clean
        assert (await holder.prompt(session, "still mine"))["stopReason"] == "end_turn"
        first.assert_clean()
        assert (await holder.exit_after_eof(within=EOF_WITHIN)).clean
