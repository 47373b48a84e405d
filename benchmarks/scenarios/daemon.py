"""``tether run`` spawn → answer three ways, side by side (issue 29, item 2): in-process (its
own ``tether serve``, as without the daemon), through a cold daemon (none running: the front
starts one, so the run waits for its imports) and through a warm one (already running).

The same read → write → answer task against the same local fake OpenAI and Anthropic APIs
(real SDKs) as ``first_answer``; each daemon gets a runtime folder of its own and is stopped
at the end.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
import tempfile
from pathlib import Path

from ..harness import Context
from ..report import Row
from .first_answer import APP, TimedApi, _one_run

NAME = "daemon (tether run)"


async def _stop(runtime: Path, env: dict[str, str]) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tether",
        "daemon",
        "stop",
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
    )
    async with asyncio.timeout(30):
        await process.wait()


async def run(ctx: Context) -> list[Row]:
    rows: list[Row] = []
    runs = max(1, ctx.sizes.provider_runs // 3)
    for provider in ("openai", "anthropic"):
        root = ctx.folder(f"daemon-{provider}")
        (root / "src").mkdir()
        (root / "src" / "app.py").write_text(APP)
        times: dict[str, list[float]] = {"in-process": [], "cold daemon": [], "warm daemon": []}
        with TimedApi() as fake:
            await _one_run(ctx, provider, fake, root, 0)  # the page cache
            for index in range(1, runs + 1):
                total, _ = await _one_run(ctx, provider, fake, root, index)
                times["in-process"].append(total)
                runtime = Path(tempfile.mkdtemp(prefix="tb-", dir="/tmp"))
                env = {"TETHER_DAEMON": "1", "XDG_RUNTIME_DIR": str(runtime)}
                try:
                    cold, _ = await _one_run(ctx, provider, fake, root, index, env)
                    warm, _ = await _one_run(ctx, provider, fake, root, index, env)
                    times["cold daemon"].append(cold)
                    times["warm daemon"].append(warm)
                    ctx.log(
                        f"{provider} {index}: in-process {total:.0f}, cold {cold:.0f}, "
                        f"warm {warm:.0f} ms"
                    )
                finally:
                    await _stop(runtime, ctx.env(ctx.folder("daemon-stop")) | env)
                    shutil.rmtree(runtime, ignore_errors=True)
        for how, values in times.items():
            rows.append(Row.of(NAME, f"{provider}: spawn → answer, {how}", "ms", values))
    return rows
