"""The wait for servers in their first start (``McpHub.settle``), over a real server held at
its start (``recording_server.py`` with ``GATE``) until the test opens its FIFO: a server
still starting when the wait's bound is over is told — the last report, the user's warning,
the model's note — and its tools join once it is up; a later wait has nothing to wait for."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from tether.mcp.hub import McpHub
from tether_protocol import McpServerSettings

from ..fifo import gate, release

RECORDER = Path(__file__).with_name("recording_server.py")


def held(tmp_path: Path, fifo: Path) -> McpServerSettings:
    return McpServerSettings(
        command=sys.executable,
        args=[str(RECORDER)],
        env={"MARKS": str(tmp_path), "TAG": "slow", "GATE": str(fifo)},
        startup_timeout_seconds=90,
    )


async def test_a_server_still_starting_after_the_wait_is_told_and_joins_when_up(
    tmp_path: Path,
) -> None:
    fifo = gate(tmp_path)
    warned: list[str] = []
    reports: list[str] = []
    async with McpHub({"PATH": os.environ["PATH"], "HOME": str(tmp_path)}, warned.append) as hub:
        await hub.configure({"slow": held(tmp_path, fifo)}, tmp_path)
        hub.start()
        # Held until the FIFO is opened: whatever the machine's speed, it is not up when
        # this short wait is over.
        await hub.settle(lambda ms, line, tail: reports.append(line), within=0.2)
        assert reports[-1] == "MCP server slow still starting: going on without its tools"
        assert warned == [
            "MCP server 'slow' is still starting after 0.2 s; its tools are added when it is up"
        ]
        note = hub.missing()
        assert note is not None and 'MCP server "slow" is still starting' in note
        assert hub.tools() == []

        await release(fifo, 30)
        await hub.ready(60)
        assert [t.name for t in hub.tools()] == ["mcp__slow__echo"]
        assert hub.missing() is None
        reports.clear()
        await hub.settle(lambda ms, line, tail: reports.append(line), within=0.2)
        assert reports == []  # nothing to wait for, nothing said
        assert len(warned) == 1
