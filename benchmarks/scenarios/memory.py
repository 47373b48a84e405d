"""Memory: the server's resident set after ``initialize``, and after N sequential runs.

Each run is a short scripted one (read a file, answer) in a new session, the way an editor
user fires one prompt after another. RSS and its peak come from ``/proc/PID/status``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..harness import Context, call, script, small_file
from ..report import Row

NAME = "memory"


def _status(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM of ``pid`` in MB."""
    found: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) / 1024
    return found


def _open_files(pid: int) -> int:
    return len(list(Path(f"/proc/{pid}/fd").iterdir()))


async def run(ctx: Context) -> list[Row]:
    runs = ctx.sizes.memory_runs
    root = ctx.folder("memory-ws")
    (root / "small.py").write_text(small_file())
    turns: list[dict[str, Any]] = [
        {"text": "Reading.", "toolCalls": [call("read_file", path="small.py")]},
        {"text": "Ok."},
    ]
    options = {"provider": "scripted", "script": script(*turns)}
    async with ctx.server("memory", root) as server:
        server.keep_events = False
        await server.initialize(root, options)
        await server.request("agent/sessions", {})  # a round trip: initialized is handled
        after_init = _status(server.pid)["VmRSS"]
        fds_before = _open_files(server.pid)
        await server.run("first")
        after_first = _status(server.pid)["VmRSS"]
        for i in range(runs - 1):
            result = await server.run(f"prompt {i}")
            if result["outcome"] != "done":
                raise RuntimeError(f"run {i}: {result}")
        status = _status(server.pid)
        fds_after = _open_files(server.pid)
    ctx.log(f"RSS {after_init:.1f} → {after_first:.1f} → {status['VmRSS']:.1f} MB")
    note = f"peak {status['VmHWM']:.1f} MB; open files {fds_before} → {fds_after}"
    return [
        Row(NAME, "RSS after initialize", "MB", after_init, target="≤ 80", limit=80.0),
        Row(NAME, f"RSS after {runs:,} runs", "MB", status["VmRSS"], note=note),
        Row(
            NAME,
            f"growth over {runs:,} runs",
            "MB",
            status["VmRSS"] - after_init,
            target="≤ 10",
            limit=10.0,
            note=f"{status['VmRSS'] - after_first:.1f} MB after the first run",
        ),
    ]
