"""Step overhead: a run of N steps, each one ``read_file`` of a small file, zero model delay.

Per step = the run's wall time (``agent/run`` sent → result read) / N, events included: the
client receives and parses every event before the result. The spread is that of the gaps
between consecutive ``step`` events.
"""

from __future__ import annotations

import time

from ..harness import Context, ms, read_steps, script, small_file
from ..report import Row, median

NAME = "step overhead"


async def run(ctx: Context) -> list[Row]:
    steps = ctx.sizes.steps
    root = ctx.folder("steps-ws")
    (root / "small.py").write_text(small_file())
    turns = [*read_steps(steps, "small.py"), {"text": "Done."}]
    options = {"provider": "scripted", "script": script(*turns)}
    per_step: list[float] = []
    gaps: list[float] = []
    async with ctx.server("steps", root) as server:
        await server.initialize(root, options)
        await server.run("warm up", limits={"maxSteps": 3})  # first-run imports, unmeasured
        for _ in range(ctx.sizes.step_runs):
            server.events.clear()
            began = time.monotonic_ns()
            result = await server.run("read it many times", limits={"maxSteps": steps + 1})
            wall = time.monotonic_ns() - began
            if result["outcome"] != "done" or result["steps"] != steps + 1:
                raise RuntimeError(f"unexpected result {result}")
            per_step.append(ms(wall) / (steps + 1))
            marks = [e.at for e in server.events if e.kind == "step"]
            gaps += [ms(b - a) for a, b in zip(marks, marks[1:], strict=False)]
            ctx.log(f"{steps} steps in {ms(wall):.0f} ms")
    return [
        Row.of(NAME, f"per step, {steps}-step run", "ms", per_step, limit=1.5, p95=False),
        Row.of(
            NAME,
            "gap between step events",
            "ms",
            gaps,
            note=f"median {median(gaps):.2f}; the p95 column is its spread",
        ),
    ]
