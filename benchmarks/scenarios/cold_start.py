"""Cold start: spawn → ``initialize`` answered, Tether vs a minimal pygls server.

Both are started the same way (``python -m <module>``), alternately, so that the machine's
state at any moment weighs on both alike; the ratio is of the two medians.
"""

from __future__ import annotations

import sys

from ..client import TETHER, Server
from ..harness import Context, ms
from ..report import Row, median

NAME = "cold start"
PYGLS = (sys.executable, "-m", "benchmarks.minimal_pygls")


async def _start(argv: tuple[str, ...], ctx: Context) -> float:
    state = ctx.folder("cold-state")
    server = await Server.start(argv, env=ctx.env(state), cwd=ctx.scratch)
    try:
        at, _ = await server.initialize(ctx.scratch, {"provider": "scripted"})
        return ms(at - server.started_ns)
    finally:
        await server.close()


async def run(ctx: Context) -> list[Row]:
    tether: list[float] = []
    pygls: list[float] = []
    await _start(TETHER, ctx)  # warm the page cache for both, unmeasured
    await _start(PYGLS, ctx)
    for i in range(ctx.sizes.cold_starts):
        first, second = (TETHER, PYGLS) if i % 2 == 0 else (PYGLS, TETHER)
        a = await _start(first, ctx)
        b = await _start(second, ctx)
        (tether if first is TETHER else pygls).append(a)
        (tether if second is TETHER else pygls).append(b)
    ratio = median(tether) / median(pygls)
    pairs = [t / p for t, p in zip(tether, pygls, strict=True)]
    return [
        Row.of(NAME, "tether serve → initialize", "ms", tether),
        Row.of(NAME, "minimal pygls → initialize", "ms", pygls),
        Row(
            NAME,
            "ratio tether / pygls",
            "×",
            ratio,
            None,
            len(pairs),
            "≤ 1.15",
            1.15,
            note=f"ratio of medians; pairwise median {median(pairs):.2f}",
            samples=[round(p, 4) for p in pairs],
        ),
    ]
