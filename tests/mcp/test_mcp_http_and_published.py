"""MCP tools from a streamable-HTTP server on 127.0.0.1 (the test server, with a header
from Tether's environment) and from a published server, ``mcp-server-time`` from PyPI."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tether.mcp.hub import McpHub
from tether_protocol import McpServerSettings

from ..waiting import wait_until
from .conftest import SERVER, STARTUP, run_calls


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[int]:
    port = free_port()
    env = {"PATH": "/usr/bin:/bin", "NOTES_MARKS": str(tmp_path)}
    process = subprocess.Popen(
        [sys.executable, str(SERVER), "http", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield port
    finally:
        process.kill()
        process.wait(timeout=10)


async def test_a_streamable_http_server(tmp_path: Path, http_server: int) -> None:
    await wait_until(lambda: accepts(http_server), "the HTTP server", within=STARTUP)
    settings = McpServerSettings(
        url=f"http://127.0.0.1:{http_server}/mcp",
        headers={"X-Token": "${DOCS_TOKEN}"},
        startup_timeout_seconds=STARTUP,
    )
    async with McpHub({"DOCS_TOKEN": "t0ken"}) as hub:
        await hub.configure({"docs": settings}, tmp_path)
        hub.start()
        await hub.servers["docs"].wait_ready()
        assert hub.servers["docs"].failure is None, hub.servers["docs"].failure
        ran = await run_calls(
            hub,
            tmp_path,
            [
                {"name": "mcp__docs__echo", "arguments": {"text": "over http"}},
                {"name": "mcp__docs__fail", "arguments": {}},
            ],
        )
        echo, fail = ran.results()
        assert [a.tool for a in ran.asker.asked] == ["mcp__docs__echo", "mcp__docs__fail"]
        assert "http://127.0.0.1" in ran.asker.asked[0].preview.cwd  # type: ignore[union-attr]
        assert not echo.is_error and "echo: over http" in echo.content
        assert fail.is_error and "MCP server 'docs': fail failed" in fail.content


async def test_the_published_time_server(tmp_path: Path) -> None:
    settings = McpServerSettings(
        command=sys.executable,
        args=["-m", "mcp_server_time", "--local-timezone", "UTC"],
        startup_timeout_seconds=STARTUP,
    )
    async with McpHub({"PATH": "/usr/bin:/bin"}) as hub:
        await hub.configure({"time": settings}, tmp_path)
        hub.start()
        await hub.servers["time"].wait_ready()
        assert hub.servers["time"].failure is None, hub.servers["time"].failure
        names = [t.name for t in hub.tools()]
        assert "mcp__time__get_current_time" in names and "mcp__time__convert_time" in names
        ran = await run_calls(
            hub,
            tmp_path,
            [{"name": "mcp__time__get_current_time", "arguments": {"timezone": "Europe/Paris"}}],
        )
        [result] = ran.results()
        assert not result.is_error, result.content
        body = result.content.split("\n", 1)[1].rsplit("\n", 1)[0]
        assert json.loads(body)["timezone"] == "Europe/Paris"
