"""Concurrency: N runs of M steps at once vs the same N runs one after another.

One server; each run is its own session reading a small file M times. The ratio is of the
wall times (concurrent / sequential); every run's own time is reported so that a starved
run shows (all runs share the loop fairly when each finishes near the end).
"""

from __future__ import annotations

import asyncio
import time

from ..client import Server
from ..harness import Context, ms, read_steps, script, small_file
from ..report import Row, median

NAME = "concurrency"


async def _timed_run(server: Server, steps: int, index: int) -> float:
    began = time.monotonic_ns()
    result = await server.run(f"run {index}", limits={"maxSteps": steps + 1})
    if result["outcome"] != "done" or result["steps"] != steps + 1:
        raise RuntimeError(f"run {index}: {result}")
    return ms(time.monotonic_ns() - began)


async def run(ctx: Context) -> list[Row]:
    runs, steps = ctx.sizes.concurrent_runs, ctx.sizes.concurrent_steps
    root = ctx.folder("concurrency-ws")
    (root / "small.py").write_text(small_file())
    options = {
        "provider": "scripted",
        "script": script(*read_steps(steps, "small.py"), {"text": "Done."}),
    }
    sequential: list[float] = []
    concurrent: list[float] = []
    each: list[float] = []
    async with ctx.server("concurrency", root) as server:
        server.keep_events = False
        await server.initialize(root, options)
        await _timed_run(server, steps, -1)  # warm up
        for _ in range(ctx.sizes.concurrency_rounds):
            began = time.monotonic_ns()
            for i in range(runs):
                await _timed_run(server, steps, i)
            sequential.append(ms(time.monotonic_ns() - began))
            began = time.monotonic_ns()
            times = await asyncio.gather(*(_timed_run(server, steps, i) for i in range(runs)))
            concurrent.append(ms(time.monotonic_ns() - began))
            each = list(times)
            ctx.log(f"sequential {sequential[-1]:.0f} ms, concurrent {concurrent[-1]:.0f} ms")
    spread = max(each) / min(each)
    return [
        Row.of(NAME, f"{runs} × {steps} steps, one after another", "ms", sequential, p95=False),
        Row.of(NAME, f"{runs} × {steps} steps, at once", "ms", concurrent, p95=False),
        Row(
            NAME,
            "ratio at once / one after another",
            "×",
            median(concurrent) / median(sequential),
            n=len(concurrent),
            target="≤ 1.2",
            limit=1.2,
        ),
        Row(
            NAME,
            "each run's time, at once (last round)",
            "ms",
            median(each),
            max(each),
            len(each),
            note=f"slowest/fastest {spread:.2f}: " + ", ".join(f"{t:.0f}" for t in each),
        ),
    ]
