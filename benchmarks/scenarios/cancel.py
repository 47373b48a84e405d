"""Cancel: ``agent/cancel`` → the run's result, during a model call and during a command.

The contract says a cancelled run ends within 1 s; the e2e tests check it with a margin
for loaded machines (``tests/e2e/test_runs.py``, ``tests/e2e/test_edits.py``), the real
number is here. The model call waits 30 s; the command starts a background ``sleep`` and
waits on another, and its time runs until the background child is gone too.
"""

from __future__ import annotations

import asyncio
import time

from ..client import Server
from ..harness import Context, call, ms, script
from ..report import Row
from .exit import COMMAND, _alive

NAME = "cancel"
LIMIT_MS = 1000.0


async def _started(server: Server, run_id: str, kind: str) -> None:
    deadline = time.monotonic() + 10
    while not any(e.params.get("runId") == run_id and e.kind == kind for e in server.events):
        if time.monotonic() > deadline:
            raise RuntimeError(f"run {run_id} sent no {kind}")
        await asyncio.sleep(0.005)


async def _cancel(server: Server, run_id: str) -> float:
    """Cancel the run; milliseconds until its result arrived (cancelled)."""
    task = asyncio.create_task(server.run("wait", runId=run_id))
    await _started(server, run_id, "step")
    began = time.monotonic_ns()
    await server.request("agent/cancel", {"runId": run_id})
    result = await asyncio.wait_for(task, 10)
    if result["outcome"] != "cancelled":
        raise RuntimeError(f"run {run_id}: {result}")
    return ms(time.monotonic_ns() - began)


async def _during_model_call(ctx: Context) -> list[float]:
    root = ctx.folder("cancel-ws")
    options = {"provider": "scripted", "script": script({"text": "slow"}, delaySeconds=30)}
    async with ctx.server("cancel", root) as server:
        await server.initialize(root, options)
        return [await _cancel(server, f"m{i}") for i in range(ctx.sizes.cancels)]


async def _during_command(ctx: Context) -> list[float]:
    times: list[float] = []
    for i in range(ctx.sizes.cancels):
        root = ctx.folder("cancel-cmd-ws")
        options = {
            "provider": "scripted",
            "autoApprove": ["bash"],
            "script": script({"toolCalls": [call("bash", command=COMMAND)]}),
        }
        async with ctx.server("cancel-cmd", root) as server:
            await server.initialize(root, options)
            run_id = f"c{i}"
            task = asyncio.create_task(server.run("wait", runId=run_id))
            pid_file = root / "child.pid"
            deadline = time.monotonic() + 10
            while not (pid_file.exists() and pid_file.read_text().endswith("\n")):
                if time.monotonic() > deadline:
                    raise RuntimeError("the command did not start")
                await asyncio.sleep(0.005)
            child = int(pid_file.read_text())
            began = time.monotonic_ns()
            await server.request("agent/cancel", {"runId": run_id})
            result = await asyncio.wait_for(task, 10)
            while _alive(child):
                if time.monotonic_ns() - began > 10e9:
                    raise RuntimeError("the command's child outlived the cancel")
                await asyncio.sleep(0.005)
            if result["outcome"] != "cancelled":
                raise RuntimeError(f"run {run_id}: {result}")
            times.append(ms(time.monotonic_ns() - began))
    return times


async def run(ctx: Context) -> list[Row]:
    model = await _during_model_call(ctx)
    command = await _during_command(ctx)
    return [
        Row.of(NAME, "agent/cancel during a model call → result", "ms", model, limit=LIMIT_MS),
        Row.of(
            NAME,
            "agent/cancel during a command → result, its group gone",
            "ms",
            command,
            limit=LIMIT_MS,
            note="the command's background child included",
        ),
    ]
