"""The kit's client against the tiny SDK agent: what a test of ``tether acp`` relies on."""

from __future__ import annotations

from pathlib import Path

import pytest

from .client import AcpAgent, RequestError
from .conftest import TINY_AGENT, TinyFactory, repo_env
from .permissions import Choice, PermissionAsked
from .process import alive
from .recorder import NOTHING, RecordingClient


async def test_chunks_are_recorded_in_order_and_waits_are_event_driven(
    tiny_agent: TinyFactory,
) -> None:
    async with tiny_agent() as agent:
        session = await agent.new_session(Path.cwd())
        turn = agent.start_prompt(session, "say hello there world")
        first = await agent.wait_for_update("agent_message_chunk", session)
        assert first.text() and first.at_ns >= agent.started_ns
        assert (await turn)["stopReason"] == "end_turn"
        chunks = [u for u in agent.client.updates if u.kind == "agent_message_chunk"]
        assert len(chunks) == 3 and agent.text(session) == "hello there world"
        assert [u.at_ns for u in chunks] == sorted(u.at_ns for u in chunks)
        agent.client.assert_clean()


async def test_reads_come_from_the_unsaved_buffer(tiny_agent: TinyFactory, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("on disk\n")
    buffers = {str(tmp_path / "app.py"): "unsaved in the editor\n"}
    async with tiny_agent(buffers=buffers) as agent:
        session = await agent.new_session(tmp_path)
        await agent.prompt(session, "read app.py")
        assert agent.text(session) == "unsaved in the editor\n"
        assert agent.client.reads == [str(tmp_path / "app.py")]
        agent.client.assert_clean()


async def test_a_client_declaring_nothing_is_not_asked(
    tiny_agent: TinyFactory, tmp_path: Path
) -> None:
    (tmp_path / "app.py").write_text("on disk\n")
    async with tiny_agent(capabilities=NOTHING) as agent:
        session = await agent.new_session(tmp_path)
        await agent.prompt(session, "read app.py")
        await agent.prompt(session, "edit app.py changed")
        await agent.prompt(session, "run echo from-the-agent")
        assert agent.text(session) == "on disk\nfrom-the-agent\n"
        assert agent.client.reads == [] and agent.client.writes == []
        assert agent.client.terminals.created == []
        assert (tmp_path / "app.py").read_text() == "changed"
        agent.client.assert_clean()


async def test_an_undeclared_call_is_a_problem(tiny_agent: TinyFactory, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("on disk\n")
    async with tiny_agent(capabilities=NOTHING) as agent:
        session = await agent.new_session(tmp_path)
        await agent.prompt(session, "read-anyway app.py")
        assert "refused" in agent.text(session)
        with pytest.raises(AssertionError, match="did not declare"):
            agent.client.assert_clean()


async def test_allow_writes_into_the_buffer_and_not_the_disk(
    tiny_agent: TinyFactory, tmp_path: Path
) -> None:
    async with tiny_agent(permission="allow_once") as agent:
        session = await agent.new_session(tmp_path)
        assert (await agent.prompt(session, "edit new.txt hello"))["stopReason"] == "end_turn"
        [asked] = agent.client.permissions
        assert asked.answer == {"outcome": "selected", "optionId": "allow"}
        assert asked.kinds == ["allow_once", "allow_always", "reject_once"]
        assert agent.client.writes == [(str(tmp_path / "new.txt"), "hello")]
        assert not (tmp_path / "new.txt").exists()
        [call] = [u.update for u in agent.client.updates if u.kind == "tool_call"]
        assert call["content"][0]["oldText"] is None  # a new file
        statuses = [
            u.update.get("status") for u in agent.client.updates if u.kind == "tool_call_update"
        ]
        assert statuses == ["completed"]
        agent.client.assert_clean()


async def test_allow_always_picks_the_always_option(
    tiny_agent: TinyFactory, tmp_path: Path
) -> None:
    async with tiny_agent(permission="allow_always") as agent:
        session = await agent.new_session(tmp_path)
        await agent.prompt(session, "edit a.txt x")
        assert agent.client.permissions[0].answer == {"outcome": "selected", "optionId": "always"}


async def test_a_kind_not_offered_is_noted_and_answered_cancelled(
    tiny_agent: TinyFactory, tmp_path: Path
) -> None:
    async with tiny_agent(permission="reject_always") as agent:
        session = await agent.new_session(tmp_path)
        assert (await agent.prompt(session, "edit a.txt x"))["stopReason"] == "cancelled"
        [asked] = agent.client.permissions
        assert asked.missing == "reject_always" and asked.answer == {"outcome": "cancelled"}


async def test_reject_fails_the_call_and_the_turn_goes_on(
    tiny_agent: TinyFactory, tmp_path: Path
) -> None:
    async with tiny_agent(permission="reject_once") as agent:
        session = await agent.new_session(tmp_path)
        assert (await agent.prompt(session, "edit a.txt x"))["stopReason"] == "end_turn"
        assert agent.client.writes == [] and "rejected" in agent.text(session)
        assert agent.client.updates[-2].update["status"] == "failed"
        agent.client.assert_clean()


async def test_a_permission_never_answered_is_withdrawn_on_cancel(
    tiny_agent: TinyFactory, tmp_path: Path
) -> None:
    async with tiny_agent(permission="never") as agent:
        session = await agent.new_session(tmp_path)
        turn = agent.start_prompt(session, "edit a.txt x")
        asked = await agent.wait_for_permission()
        await agent.cancel(session, answer_pending=False)  # the agent must withdraw it itself
        assert (await turn)["stopReason"] == "cancelled"
        assert asked.withdrawn and asked.answer == {"outcome": "cancelled"}
        assert agent.client.writes == []
        agent.client.assert_clean()


async def test_cancel_turn_policy_cancels_from_the_permission(
    tiny_agent: TinyFactory, tmp_path: Path
) -> None:
    async with tiny_agent(permission="cancel_turn") as agent:
        session = await agent.new_session(tmp_path)
        assert (await agent.prompt(session, "edit a.txt x"))["stopReason"] == "cancelled"
        sent = [m.payload.get("method") for m in agent.client.messages if m.direction == "to_agent"]
        assert "session/cancel" in sent
        agent.client.assert_clean()


async def test_a_callable_policy_sees_the_request(tiny_agent: TinyFactory, tmp_path: Path) -> None:
    seen: list[str] = []

    def policy(asked: PermissionAsked) -> Choice:
        seen.append(str(asked.tool_call_id))
        return "reject_once"

    async with tiny_agent(permission=policy) as agent:
        session = await agent.new_session(tmp_path)
        await agent.prompt(session, "edit a.txt x")
        assert seen == ["edit-1"]


async def test_terminals_really_run_and_are_released(
    tiny_agent: TinyFactory, tmp_path: Path
) -> None:
    async with tiny_agent() as agent:
        session = await agent.new_session(tmp_path)
        await agent.prompt(session, "run echo one; pwd; exit 3")
        assert agent.text(session) == f"one\n{tmp_path}\n"
        [terminal] = agent.client.terminals.created
        assert terminal.released and terminal.exit_status() == {"exitCode": 3, "signal": None}
        agent.client.assert_clean()


async def test_a_notification_the_sdk_drops_fails_the_check(
    tiny_agent: TinyFactory, tmp_path: Path
) -> None:
    async with tiny_agent() as agent:
        session = await agent.new_session(tmp_path)
        await agent.prompt(session, "bad-usage")
        assert [u.kind for u in agent.client.updates] == ["usage_update", "agent_message_chunk"]
        [dropped] = agent.client.dropped_by_sdk
        assert dropped["message"]["params"]["update"]["used"] is None
        with pytest.raises(AssertionError, match=r"update\.used"):
            agent.client.assert_clean()


async def test_malformed_requests_on_purpose_get_their_error(tiny_agent: TinyFactory) -> None:
    async with tiny_agent() as agent:
        with pytest.raises(RequestError) as invalid:
            await agent.request("session/new", {"cwd": 42}, checked=False)
        assert invalid.value.code == -32602
        with pytest.raises(RequestError) as unknown:
            await agent.request("session/teleport", {}, checked=False)
        assert unknown.value.code == -32601
        agent.client.assert_clean()


async def test_an_agent_that_exits_on_eof_passes_the_exit_check(tiny_agent: TinyFactory) -> None:
    async with tiny_agent() as agent:
        check = await agent.exit_after_eof(within=5.0)
        assert check.clean and check.returncode == 0


async def test_an_agent_that_lingers_fails_it_and_is_killed_at_the_end(tmp_path: Path) -> None:
    client = RecordingClient()
    async with AcpAgent.spawn(
        [*TINY_AGENT, "--linger"], cwd=tmp_path, env=repo_env(), client=client
    ) as agent:
        await agent.initialize()
        check = await agent.exit_after_eof(within=1.0)
        assert not check.exited and len(check.left_behind) == 1
        pids = {agent.process.pid, *check.left_behind}
    assert not any(alive(pid) for pid in pids)
