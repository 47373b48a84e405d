"""Exit: stdin closed while a run's command is running → the process is gone, and so is
every process the command started, within the time measured here.

The command (auto-approved ``bash``) starts a background ``sleep`` and waits on another;
the time is from closing stdin to the server's exit with every child gone.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from ..client import TETHER, Server
from ..harness import Context, call, ms, script
from ..report import Row

NAME = "exit"
COMMAND = "sleep 300 & echo $! > child.pid; sleep 300"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _descendants(pid: int) -> set[int]:
    """Every process whose parent chain leads to ``pid``."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry.name)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                continue
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


async def _once(ctx: Context) -> tuple[float, int]:
    root = ctx.folder("exit-ws")
    options = {
        "provider": "scripted",
        "autoApprove": ["bash"],
        "script": script({"toolCalls": [call("bash", command=COMMAND)]}),
    }
    server = await Server.start(TETHER, env=ctx.env(ctx.folder("exit-state")), cwd=root)
    children: set[int] = set()
    try:
        await server.initialize(root, options)
        task = asyncio.create_task(server.run("wait"))
        pid_file = root / "child.pid"
        deadline = time.monotonic() + 10
        while not (pid_file.exists() and pid_file.read_text().strip()):
            if time.monotonic() > deadline:
                raise RuntimeError("the command did not start")
            await asyncio.sleep(0.01)
        children = _descendants(server.pid) | {int(pid_file.read_text())}
        began = time.monotonic_ns()
        assert server.process.stdin is not None
        server.process.stdin.close()
        await asyncio.wait_for(server.process.wait(), 10)
        while any(_alive(pid) for pid in children):
            if time.monotonic_ns() - began > 10e9:
                raise RuntimeError("children outlived the server")
            await asyncio.sleep(0.005)
        took = ms(time.monotonic_ns() - began)
        task.cancel()
        return took, len(children)
    finally:
        await server.kill()
        for pid in children:  # never leave a sleeper behind, whatever happened
            if _alive(pid):
                os.kill(pid, 9)


async def run(ctx: Context) -> list[Row]:
    times: list[float] = []
    killed = 0
    for _ in range(ctx.sizes.exits):
        took, killed = await _once(ctx)
        times.append(took)
    return [
        Row.of(
            NAME,
            "stdin closed mid-command → all gone",
            "ms",
            times,
            limit=2000.0,
            note=f"{killed} child processes each time, all gone",
        )
    ]
