"""``tether acp`` waits for a session's MCP servers before the first model call, and shows it.

The server (``tests/mcp/recording_server.py`` with ``GATE``) answers nothing until the test
opens its FIFO, which the test does once the client was shown the wait (a tool call of its
own, ``waiting for MCP server slow to start``). The model is the fake OpenAI API, so the test
reads what the first model request offered: the slow server's tools. A server that does not
start within its ``startupTimeoutSeconds`` leaves the prompt to run, the model told which
server is missing."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.providers.fakes import FakeApi, Recorded, Sse, openai_stream

from ..fifo import gate, release
from .client import AcpAgent
from .recorder import NOTHING, RecordingClient
from .tether import EOF_WITHIN, TETHER_ACP, tether_env

RECORDER = Path(__file__).parents[1] / "mcp" / "recording_server.py"
WITHIN = 30.0
"""A bound on each wait, never a timing assertion (a loaded 2-core machine)."""


@pytest.fixture
def fake() -> Iterator[FakeApi]:
    with FakeApi() as api:
        yield api


@asynccontextmanager
async def tether_acp_on(
    root: Path, state: Path, fake: FakeApi, client: RecordingClient
) -> AsyncIterator[AcpAgent]:
    """``tether acp`` in ``root`` on the fake OpenAI API, initialized."""
    env = tether_env(state, {"turns": []})
    env.update(TETHER_PROVIDER="openai", TETHER_BASE_URL=fake.url + "/v1", TETHER_MODEL="gpt-5.4")
    async with AcpAgent.spawn(TETHER_ACP, cwd=root, env=env, client=client) as agent:
        await agent.initialize()
        yield agent


def tools_of(request: Recorded) -> list[str]:
    return [t["function"]["name"] for t in request.body.get("tools", [])]


def system_of(request: Recorded) -> str:
    first = request.body["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def waiting(client: RecordingClient) -> dict[str, Any] | None:
    """The tool call that shows the wait for the slow server, once it was shown."""
    return next(
        (
            u.update
            for u in client.updates
            if u.kind == "tool_call" and "MCP server slow" in str(u.update.get("title"))
        ),
        None,
    )


async def test_the_first_prompt_waits_for_the_sessions_slow_server_and_has_its_tools(
    tmp_path: Path, fake: FakeApi
) -> None:
    root = tmp_path / "work"
    root.mkdir()
    marks = tmp_path / "marks"
    marks.mkdir()
    fifo = gate(tmp_path)
    server = {
        "name": "slow",
        "command": sys.executable,
        "args": [str(RECORDER)],
        "env": [
            {"name": "MARKS", "value": str(marks)},
            {"name": "TAG", "value": "slow"},
            {"name": "GATE", "value": str(fifo)},
        ],
    }
    fake.queue(Sse(openai_stream("Noted.", usage=(10, 5))))
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp_on(root, tmp_path, fake, client) as agent:
        session = await agent.new_session(root, mcp_servers=[server])
        turn = agent.start_prompt(session, "list my notes")
        try:
            shown = await client.wait_for(lambda: waiting(client), "the wait shown", WITHIN)
            assert (shown["title"], shown["status"]) == (
                "waiting for MCP server slow to start",
                "in_progress",
            )
            assert fake.requests == []  # the model is not asked meanwhile
        finally:
            await release(fifo, WITHIN)
        assert (await turn)["stopReason"] == "end_turn"
        [request] = fake.requests
        assert "mcp__slow__echo" in tools_of(request)
        ended = [
            u.update
            for u in client.updates
            if u.kind == "tool_call_update" and u.update["toolCallId"] == shown["toolCallId"]
        ]
        assert ended[-1]["status"] == "completed"  # the wait is over
        client.assert_clean()  # every update valid against ACP's schema
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean


async def test_a_server_that_does_not_start_in_time_leaves_the_prompt_to_run_without_it(
    tmp_path: Path, fake: FakeApi
) -> None:
    root = tmp_path / "work"
    root.mkdir()
    marks = tmp_path / "marks"
    marks.mkdir()
    fifo = gate(tmp_path)  # never released: its startup timeout (1 s) ends it
    config = tmp_path / "home" / ".config" / "tether"
    config.mkdir(parents=True)
    (config / "config.toml").write_text(
        "[mcpServers.slow]\n"
        f'command = "{sys.executable}"\n'
        f'args = ["{RECORDER}"]\n'
        f'env = {{ MARKS = "{marks}", TAG = "slow", GATE = "{fifo}" }}\n'
        "startupTimeoutSeconds = 1\n"
    )
    fake.queue(Sse(openai_stream("Without notes.", usage=(10, 5))))
    client = RecordingClient(capabilities=NOTHING)
    async with tether_acp_on(root, tmp_path, fake, client) as agent:
        session = await agent.new_session(root)
        assert (await agent.prompt(session, "list my notes"))["stopReason"] == "end_turn"
        [request] = fake.requests
        assert not [name for name in tools_of(request) if name.startswith("mcp__")]
        system = system_of(request)
        assert 'MCP server "slow"' in system and "not available" in system, system
        client.assert_clean()
        assert (await agent.exit_after_eof(within=EOF_WITHIN)).clean
