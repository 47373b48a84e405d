"""Search: the ``search`` tool over a tree of N files vs ``rg`` run directly on it.

Tether's time is ``tool-call`` → ``tool-result`` event arrival; ripgrep's is spawn → exit
of ``rg --line-number`` with the file selection ``search`` uses (the same ``.gitignore``
rules, hidden files, no ``.git``), run alternately. The Python fallback (no ``rg``) is the
same server under ``benchmarks.shim`` with ``BENCH_NO_RG=1``. All three must find the same
matches. A hostile pattern, ``^(\\w+\\s?)*$`` (exponential for a backtracking engine on
``notes.txt``'s ``"a" * 34 + "!"``), is then timed in both engines: linear, it must cost about
what an ordinary search does.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tether.tools.search import RG_FLAGS, find_rg

from ..client import Server
from ..harness import Context, call, ms, script
from ..report import Row, median

NAME = "search"
NEEDLE = "needle_symbol"
HOSTILE = r"^(\w+\s?)*$"
EVERY = 400
"""One file in this many holds the needle (once): the matches fit the event's 4,000-character
preview of the output, which is what this client sees and compares."""


def make_tree(root: Path, files: int) -> int:
    """``files`` small source files in folders of 100, plus ignored ones; the needle count."""
    (root / ".gitignore").write_text("build/\n*.log\n")
    needles = 0
    for i in range(files):
        folder = root / f"pkg{i // 1000:02d}" / f"mod{i // 100 % 10}"
        if i % 100 == 0:
            folder.mkdir(parents=True, exist_ok=True)
        body = [f"def function_{i}_{n}(value):\n    return value * {n}\n" for n in range(10)]
        if i % EVERY == 0:
            body.insert(5, f"CONSTANT = {NEEDLE}({i})\n")
            needles += 1
        (folder / f"file{i}.py").write_text("".join(body))
    build = root / "build"
    build.mkdir()
    for i in range(50):  # ignored: must not be found by either
        (build / f"gen{i}.py").write_text(f"{NEEDLE} = {i}\n")
    (root / "debug.log").write_text(f"{NEEDLE}\n")
    (root / "notes.txt").write_text("a" * 34 + "!\nok\n")  # ok: rg passes the file on
    return needles


async def _rg(rg: str, root: Path) -> tuple[float, set[str]]:
    began = time.monotonic_ns()
    process = await asyncio.create_subprocess_exec(
        rg,
        *RG_FLAGS,
        "--line-number",
        "--no-heading",
        "-e",
        NEEDLE,
        "--",
        ".",
        cwd=root,
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await asyncio.wait_for(process.communicate(), 60)
    took = ms(time.monotonic_ns() - began)
    found = {
        line.split(":", 2)[0].removeprefix("./") + ":" + line.split(":", 2)[1]
        for line in out.decode().splitlines()
    }
    return took, found


async def _tether(server: Server, prompt: str = "find the needle") -> tuple[float, set[str]]:
    server.events.clear()
    await server.run(prompt)
    tool_call = next(e for e in server.events if e.kind == "tool-call")
    result = next(e for e in server.events if e.kind == "tool-result")
    if not result.params["ok"]:
        raise RuntimeError(f"search failed: {result.params}")
    found = {":".join(line.split(":", 2)[:2]) for line in result.params["output"].splitlines()}
    return ms(result.at - tool_call.at), found


async def run(ctx: Context) -> list[Row]:
    rg = find_rg()
    if rg is None:
        raise RuntimeError("no rg binary (install the test extra: ripgrep)")
    root = ctx.folder("search-ws")
    needles = make_tree(root, ctx.sizes.search_files)
    options = {
        "provider": "scripted",
        "script": script({"toolCalls": [call("search", pattern=NEEDLE)]}, {"text": "ok"}),
    }
    hostile_options = {
        "provider": "scripted",
        "script": script({"toolCalls": [call("search", pattern=HOSTILE)]}, {"text": "ok"}),
    }
    rg_times: list[float] = []
    tether_times: list[float] = []
    fallback_times: list[float] = []
    hostile_times: dict[str, list[float]] = {"rg": [], "python": []}
    async with (
        ctx.server("search", root) as server,
        ctx.server("search-python", root, shim=True, BENCH_NO_RG="1") as python,
        ctx.server("search-hostile", root) as hostile,
        ctx.server("search-hostile-python", root, shim=True, BENCH_NO_RG="1") as hostile_python,
    ):
        await server.initialize(root, options)
        await python.initialize(root, options)
        await hostile.initialize(root, hostile_options)
        await hostile_python.initialize(root, hostile_options)
        _, expected = await _rg(rg, root)  # warms the page cache
        if len(expected) != needles:
            raise RuntimeError(f"rg found {len(expected)} matches, expected {needles}")
        for _ in range(ctx.sizes.search_runs):
            took, found = await _rg(rg, root)
            rg_times.append(took)
            took, found_tether = await _tether(server)
            tether_times.append(took)
            if found_tether != expected:
                raise RuntimeError("search and rg disagree")
        for _ in range(max(1, ctx.sizes.search_runs // 2)):
            took, found_python = await _tether(python)
            fallback_times.append(took)
            if found_python != expected:
                raise RuntimeError("the Python fallback and rg disagree")
        for _ in range(max(1, ctx.sizes.search_runs // 2)):
            for engine, hostile_server in (("rg", hostile), ("python", hostile_python)):
                took, found_hostile = await _tether(hostile_server, "a hostile pattern")
                hostile_times[engine].append(took)
                if "notes.txt:2" not in found_hostile:
                    raise RuntimeError(f"the hostile search ({engine}) missed notes.txt:2")
    files = f"{ctx.sizes.search_files:,} files, {needles} matches"
    return [
        Row.of(NAME, f"rg directly ({files})", "ms", rg_times),
        Row.of(NAME, "search tool (rg inside)", "ms", tether_times),
        Row(
            NAME,
            "ratio search / rg",
            "×",
            median(tether_times) / median(rg_times),
            target="≤ 1.3",
            limit=1.3,
            n=len(tether_times),
        ),
        Row.of(
            NAME,
            "search tool, Python fallback",
            "ms",
            fallback_times,
            note=f"{median(fallback_times) / median(rg_times):.1f}× rg",
        ),
        Row.of(NAME, f"hostile {HOSTILE} (rg inside)", "ms", hostile_times["rg"]),
        Row.of(NAME, f"hostile {HOSTILE}, Python fallback", "ms", hostile_times["python"]),
    ]
