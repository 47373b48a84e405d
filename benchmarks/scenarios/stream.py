"""Stream relay: one model turn of N text deltas, as fast as the scripted model can give them.

The server runs under ``benchmarks.shim`` with ``BENCH_STAMPS``: the moment the provider
hands over each delta is noted (``time.monotonic_ns``, the same clock as this process).
Latency of a delta = its arrival here − that moment; when the server coalesces deltas, a
delta arrives with the event that carries its last character. Throughput = N / (last
arrival − first hand-over). The text must arrive intact and in order.

This process's garbage collector is off while the turn streams: a full collection of the
harness's own heap (20,000 parsed events and everything imported) stops the reader for
15–40 ms, the server's writes back up behind it, and that pause would be counted as the
server's latency. An editor's collector is its own; the server's runs as usual.
"""

from __future__ import annotations

import bisect
import gc
from itertools import accumulate

from ..harness import Context, ms, script
from ..report import Row, percentile

NAME = "stream relay"


def _pieces(count: int) -> list[str]:
    """What ``split_text`` makes of the turn's text: one delta per word (with its space)."""
    return [f"w{i} " for i in range(count)]


async def _once(ctx: Context, count: int) -> tuple[float, list[float], int]:
    pieces = _pieces(count)
    text = "".join(pieces)
    root = ctx.folder("stream-ws")
    stamps_file = ctx.scratch / "stamps.txt"
    stamps_file.unlink(missing_ok=True)
    options = {"provider": "scripted", "script": script({"text": text})}
    async with ctx.server("stream", root, shim=True, BENCH_STAMPS=str(stamps_file)) as server:
        await server.initialize(root, options)
        await server.run("warm up")
        server.events.clear()
        gc.collect()
        gc.disable()
        try:
            result = await server.run("stream")
        finally:
            gc.enable()
        if result["answer"] != text:
            raise RuntimeError("the answer is not the streamed text")
        deltas = [e for e in server.events if e.kind == "text-delta"]
    stamps = [int(x) for x in stamps_file.read_text().split()][-count:]
    received = "".join(e.params["text"] for e in deltas)
    if received != text:
        raise RuntimeError(f"text not intact: {len(received)} of {len(text)} characters")
    ends = list(accumulate(len(p) for p in pieces))
    arrival: list[int] = [0] * count
    seen = 0
    index = 0
    for event in deltas:
        seen += len(event.params["text"])
        last = bisect.bisect_right(ends, seen)
        for i in range(index, last):
            arrival[i] = event.at
        index = last
    latencies = [ms(a - s) for a, s in zip(arrival, stamps, strict=True)]
    rate = count / ((deltas[-1].at - stamps[0]) / 1e9)
    return rate, latencies, len(deltas)


async def run(ctx: Context) -> list[Row]:
    count = ctx.sizes.deltas
    rates: list[float] = []
    p99s: list[float] = []
    events: list[int] = []
    for _ in range(ctx.sizes.stream_runs):
        rate, latencies, sent = await _once(ctx, count)
        rates.append(rate)
        p99s.append(percentile(latencies, 99))
        events.append(sent)
        ctx.log(f"{rate:,.0f} deltas/s, p99 {p99s[-1]:.1f} ms, {sent} events")
    return [
        Row.of(
            NAME,
            f"throughput, {count:,} deltas",
            "deltas/s",
            rates,
            limit=50_000,
            higher_is_better=True,
            note=f"text intact; events sent per run: {', '.join(map(str, events))}",
            p95=False,
        ),
        Row.of(NAME, "added latency p99", "ms", p99s, limit=20.0, p95=False),
    ]
