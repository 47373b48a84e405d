"""First-answer latency: spawning ``tether run`` → its final answer, on the 3-turn
read → write → answer task, against local fake OpenAI and Anthropic APIs (real SDKs).

This is what a terminal user waits for the first time (the warm daemon serves the runs
after it): the CLI's own start, the ``tether serve`` it spawns, ``initialize``, the
provider SDK's import and three model turns. Most of it is importing libraries that any
Python agent built on pygls and that SDK imports, and whose size Tether does not choose:
the row compares with that floor, measured in the same rounds (the two take turns going
first), so that the ratio is Tether's start-up and not the SDK's release. The breakdown:

- spawn → first model request: everything before the model is asked (when the fake API
  receives the first request);
- first model request → answer: the three turns, the read and the approved write;
- ``tether serve`` spawn → ``initialize`` answered, measured on its own.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

from tests.providers.fakes import FakeApi, Recorded, Reply, Sse, anthropic_stream, openai_stream

from ..client import TETHER, Server
from ..harness import Context, ms
from ..report import Row, median

NAME = "first answer (tether run)"
APP = "def greet(name):\n    return 'hello ' + name\n"
ANSWER = "it says hi now."
TARGET_RATIO = 2.0
"""spawn → answer over the floor, the libraries' own import: Tether's start-up (its CLI, its
server's own modules, the first run) costs at most as much again."""
SDK = {"openai": "openai", "anthropic": "anthropic"}


class TimedApi(FakeApi):
    """A fake API that notes when each request arrived (``time.monotonic_ns``)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[int] = []

    def record(self, request: Recorded) -> Reply:
        self.arrivals.append(time.monotonic_ns())
        return super().record(request)


def _queue_task(fake: FakeApi, provider: str, index: int) -> None:
    stream = openai_stream if provider == "openai" else anthropic_stream
    content = json.dumps({"path": "src/app.py", "content": APP.replace("hello", f"hi {index}")})
    fake.queue(
        Sse(stream("Let me read it.", calls=[("c1", "read_file", ['{"path": "src/app.py"}'])])),
        Sse(stream("Now the change.", calls=[("c2", "write_file", [content])])),
        Sse(stream("Done: ", ANSWER)),
    )


async def _one_run(
    ctx: Context,
    provider: str,
    fake: TimedApi,
    root: Path,
    index: int,
    extra_env: dict[str, str] | None = None,
) -> tuple[float, float]:
    """One ``tether run`` from spawn to the answer on its stdout: (total, to 1st request)."""
    _queue_task(fake, provider, index)
    base_url = fake.url + "/v1" if provider == "openai" else fake.url
    argv = [sys.executable, "-m", "tether", "run", "--yes", "--provider", provider]
    argv += ["--base-url", base_url, "--model", "bench-model", "make it say hi"]
    key = "OPENAI_API_KEY" if provider == "openai" else "ANTHROPIC_API_KEY"
    env = ctx.env(ctx.folder(f"first-{provider}-state"), **{key: "bench-key"})
    env |= extra_env or {}
    before = len(fake.arrivals)
    began = time.monotonic_ns()
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE
    )
    assert process.stdout is not None
    seen = b""
    answered: int | None = None
    try:
        async with asyncio.timeout(60):
            while chunk := await process.stdout.read(65536):
                seen += chunk
                if answered is None and ANSWER.encode() in seen:
                    answered = time.monotonic_ns()
            code = await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    if answered is None or code != 0:
        raise RuntimeError(f"{provider}: tether run exited {code}: {seen[-2000:]!r}")
    if f"hi {index}" not in (root / "src" / "app.py").read_text():
        raise RuntimeError(f"{provider}: the write did not reach the disk")
    return ms(answered - began), ms(fake.arrivals[before] - began)


async def _serve_to_initialize(ctx: Context) -> float:
    server = await Server.start(
        TETHER, env=ctx.env(ctx.folder("first-serve-state")), cwd=ctx.scratch
    )
    try:
        at, _ = await server.initialize(ctx.scratch, {"provider": "scripted"})
        return ms(at - server.started_ns)
    finally:
        await server.close()


async def _floor(ctx: Context, provider: str) -> float:
    """A fresh interpreter that imports what any pygls server calling the provider's SDK
    imports (``pygls.lsp.server``, with lsprotocol, and the SDK, with pydantic and httpx):
    spawn → imported, started as the run's server is (``-I``, unbuffered), importing as it
    does (the cyclic collector off) and leaving without the interpreter's teardown."""
    code = f"import gc, os; gc.disable(); import pygls.lsp.server, {SDK[provider]}; os._exit(0)"
    env = ctx.env(ctx.folder(f"first-{provider}-floor"))
    began = time.monotonic_ns()
    process = await asyncio.create_subprocess_exec(sys.executable, "-I", "-u", "-c", code, env=env)
    async with asyncio.timeout(60):
        status = await process.wait()
    if status != 0:
        raise RuntimeError(f"{provider}: the floor's imports failed ({status})")
    return ms(time.monotonic_ns() - began)


async def run(ctx: Context) -> list[Row]:
    rows: list[Row] = []
    runs = max(1, ctx.sizes.provider_runs // 3)
    initialize = [await _serve_to_initialize(ctx) for _ in range(runs)]
    rows.append(Row.of(NAME, "tether serve spawn → initialize", "ms", initialize))
    for provider in ("openai", "anthropic"):
        root = ctx.folder(f"first-{provider}")
        (root / "src").mkdir()
        (root / "src" / "app.py").write_text(APP)
        totals: list[float] = []
        befores: list[float] = []
        floors: list[float] = []
        with TimedApi() as fake:
            for index in range(runs + 1):  # the first round warms the page cache
                floor_first = index % 2 == 1  # the two take turns going first
                floor = await _floor(ctx, provider) if floor_first else None
                total, before = await _one_run(ctx, provider, fake, root, index)
                floor = floor if floor is not None else await _floor(ctx, provider)
                ctx.log(f"{provider} run {index}: {total:.0f} ms ({before:.0f} ms to 1st call)")
                if index:
                    totals.append(total)
                    befores.append(before)
                    floors.append(floor)
        ratio = median(totals) / median(floors)
        pairs = [t / f for t, f in zip(totals, floors, strict=True)]
        rows += [
            Row.of(NAME, f"{provider}: spawn → answer", "ms", totals),
            Row.of(NAME, f"{provider}: floor (pygls + {SDK[provider]} imported)", "ms", floors),
            Row(
                NAME,
                f"{provider}: spawn → answer / floor",
                "×",
                ratio,
                None,
                len(pairs),
                f"≤ {TARGET_RATIO}",
                TARGET_RATIO,
                note=(
                    f"ratio of medians; pairwise median {median(pairs):.2f}; Tether's own "
                    f"{median(totals) - median(floors):+.0f} ms"
                ),
                samples=[round(p, 4) for p in pairs],
            ),
            Row.of(NAME, f"{provider}: spawn → 1st model request", "ms", befores),
            Row.of(
                NAME,
                f"{provider}: 1st model request → answer",
                "ms",
                [t - b for t, b in zip(totals, befores, strict=True)],
            ),
        ]
    return rows
