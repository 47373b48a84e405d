"""``tether run`` spawn → answer three ways, side by side: in-process (its
own ``tether serve``, as without the daemon), with the daemon on but none running yet (the
run goes in-process and leaves a daemon starting for the next: ``daemon.front.Cold``) and
through a warm daemon (already running: waited for, unmeasured, after the run before).

The same read → write → answer task against the same local fake OpenAI and Anthropic APIs
(real SDKs) as ``first_answer``; each daemon gets a runtime folder of its own and is stopped
at the end.

In the same run, the yardstick: ``codex app-server`` (Rust), a fresh process per run
driven over its own JSON-RPC (``benchmarks/codex_app_server.py``) on the peers' task and fake
model, spawn → ``initialize`` answered and spawn → ``turn/completed``; then the ratio of each
provider's warm daemon to it (≤ 1.0), and of the first run with no daemon yet to
in-process (no slower than without the daemon: ≤ ``SAME_PATH_NOISE``). Every system runs
once unmeasured first, then round after round one run of each, so a load on the machine
weighs on all alike. Skipped with a note when ``@openai/codex`` is not installed in the
peers' folder.

codex app-server runs three ways, each a fresh process per run (``VARIANTS``): with a fresh
``CODEX_HOME`` each run and its ``workspace-write`` sandbox, and with one ``CODEX_HOME``
kept across the runs (made by the unmeasured run, as the peers' method keeps each peer's
home: what a user's second start of Codex finds) with and without its sandbox. A fresh
home costs Codex its first-start work on every run; no sandbox is what ``tether run
--yes`` does. Each gets its ratio rows.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from tether.client.terminal import readable

from .. import codex_app_server as codex
from ..agents import PEERS_DIR
from ..harness import Context
from ..report import Row, median
from .first_answer import APP, TimedApi, _one_run

NAME = "daemon (tether run)"
VARIANTS: tuple[tuple[str, bool, str], ...] = (
    ("fresh home, workspace-write", True, "workspace-write"),
    ("kept home, workspace-write", False, "workspace-write"),
    ("kept home, no sandbox", False, "danger-full-access"),
)
"""(label, a fresh CODEX_HOME per run, the thread's sandbox)."""

SAME_PATH_NOISE = 1.05
"""The ratio of two medians of 5 runs of the same path stays within this (measured
0.97-1.02 once neither run is favoured by the order)."""


async def _daemon(action: str, env: dict[str, str]) -> str:
    """``tether daemon ACTION`` (``start`` returns once it listens); what it printed."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tether",
        "daemon",
        action,
        env=env,
        stdout=asyncio.subprocess.PIPE,
    )
    async with asyncio.timeout(30):
        out, _ = await process.communicate()
        if process.returncode != 0 and action != "status":
            raise RuntimeError(f"tether daemon {action} failed")
    return out.decode(errors="replace")


async def _stop(runtime: Path, env: dict[str, str]) -> None:
    """Stop the daemon, if one runs, and wait until its process is gone: one exiting
    competes with the next run (the run right after it was ~4% slower)."""
    found = re.search(r"pid (\d+)", await _daemon("status", env))
    await _daemon("stop", env)
    if found is None:
        return
    try:
        pidfd = os.pidfd_open(int(found.group(1)))
    except ProcessLookupError:
        return  # gone already
    try:
        await asyncio.wait_for(readable(pidfd), 30)  # readable once the process has exited
    finally:
        os.close(pidfd)


async def run(ctx: Context) -> list[Row]:
    rows: list[Row] = []
    runs = max(1, ctx.sizes.provider_runs // 3)
    providers = ("openai", "anthropic")
    times: dict[str, dict[str, list[float]]] = {
        provider: {"in-process": [], "no daemon yet": [], "warm daemon": []}
        for provider in providers
    }
    app_server: dict[str, list[codex.AppServerTiming]] = {label: [] for label, _, _ in VARIANTS}
    with_codex = codex.available()
    if not with_codex:
        ctx.notes.append(f"{codex.NAME}: not installed; to compare: {codex.INSTALL}")
    # Codex refuses its helper binaries under /tmp: its homes go in the peers' folder.
    PEERS_DIR.mkdir(parents=True, exist_ok=True)
    homes = Path(tempfile.mkdtemp(prefix="bench-app-server-", dir=PEERS_DIR))
    roots: dict[str, Path] = {}
    for provider in providers:
        roots[provider] = ctx.folder(f"daemon-{provider}")
        (roots[provider] / "src").mkdir()
        (roots[provider] / "src" / "app.py").write_text(APP)
    codex_root = ctx.folder("daemon-codex-app-server")
    with contextlib.ExitStack() as stack:
        fakes = {provider: TimedApi() for provider in providers}
        for fake in fakes.values():
            stack.enter_context(fake)
        try:
            for provider in providers:
                await _one_run(ctx, provider, fakes[provider], roots[provider], 0)  # page cache
            if with_codex:
                for variant in range(len(VARIANTS)):  # page cache and the kept homes
                    await _codex_run(codex_root, homes, variant, 0)
            for index in range(1, runs + 1):
                if with_codex:
                    for variant, (label, _, _) in enumerate(VARIANTS):
                        timing = await _codex_run(codex_root, homes, variant, index)
                        app_server[label].append(timing)
                        ctx.log(f"{codex.NAME} ({label}) {index}: {timing.answer:.0f} ms")
                for provider in providers:
                    await _round(ctx, provider, fakes[provider], roots[provider], index, times)
        finally:
            shutil.rmtree(homes, ignore_errors=True)
    for provider in providers:
        for how, values in times[provider].items():
            rows.append(Row.of(NAME, f"{provider}: spawn → answer, {how}", "ms", values))
        # The first run (no daemon yet) no slower than one without the daemon (in-process).
        # It takes the in-process path itself (``daemon.front.Cold``): the two medians differ
        # by the noise of 5 runs only, so "no slower" is read within that noise.
        cold = median(times[provider]["no daemon yet"]) / median(times[provider]["in-process"])
        rows.append(
            Row(
                NAME,
                f"{provider}: no daemon yet / in-process",
                "×",
                cold,
                None,
                runs,
                target=f"≤ {SAME_PATH_NOISE}",
                limit=SAME_PATH_NOISE,
                note="the same path: equal but for noise",
            )
        )
    for label, samples in app_server.items():
        if not samples:
            continue
        answers = [t.answer for t in samples]
        for what, values in (
            ("initialize", [t.initialize for t in samples]),
            ("1st model request", [t.first_request for t in samples]),
            ("1st message delta", [t.first_chunk for t in samples]),
            ("answer (turn/completed)", answers),
        ):
            rows.append(Row.of(NAME, f"{codex.NAME} ({label}): spawn → {what}", "ms", values))
        for provider in providers:
            ratio = median(times[provider]["warm daemon"]) / median(answers)
            rows.append(
                Row(
                    NAME,
                    f"{provider}: warm daemon / {codex.NAME} ({label})",
                    "×",
                    ratio,
                    None,
                    runs,
                    target="≤ 1",
                    limit=1.0,
                )
            )
    return rows


async def _codex_run(root: Path, homes: Path, variant: int, index: int) -> codex.AppServerTiming:
    """One fresh codex app-server of ``VARIANTS[variant]``, run ``index``."""
    _, fresh, sandbox = VARIANTS[variant]
    home = homes / (f"{variant}-{index}" if fresh else f"{variant}-kept")
    return await codex.once(root, home, sandbox=sandbox)


async def _round(
    ctx: Context,
    provider: str,
    fake: TimedApi,
    root: Path,
    index: int,
    times: dict[str, dict[str, list[float]]],
) -> None:
    """One run in-process and one with no daemon yet (it leaves one starting), each first
    in turn (the same path: the order must not decide their ratio), then one through that
    daemon once it listens."""
    runtime = Path(tempfile.mkdtemp(prefix="tb-", dir="/tmp"))
    env = {"TETHER_DAEMON": "1", "XDG_RUNTIME_DIR": str(runtime)}
    preload = {"TETHER_PROVIDER": provider}
    try:
        if index % 2:
            total, _ = await _one_run(ctx, provider, fake, root, index)
            cold, _ = await _one_run(ctx, provider, fake, root, index, env)
        else:  # the daemon the run left starting is stopped before the in-process run
            cold, _ = await _one_run(ctx, provider, fake, root, index, env)
            await _daemon("start", ctx.env(ctx.folder("daemon-start")) | env | preload)
            await _stop(runtime, ctx.env(ctx.folder("daemon-stop")) | env)
            total, _ = await _one_run(ctx, provider, fake, root, index)
        times[provider]["in-process"].append(total)
        # Started with the provider's SDK primed, as the front that found none starts it.
        await _daemon("start", ctx.env(ctx.folder("daemon-start")) | env | preload)
        warm, _ = await _one_run(ctx, provider, fake, root, index, env)
        times[provider]["no daemon yet"].append(cold)
        times[provider]["warm daemon"].append(warm)
        ctx.log(
            f"{provider} {index}: in-process {total:.0f}, no daemon yet {cold:.0f}, "
            f"warm {warm:.0f} ms"
        )
    finally:
        await _stop(runtime, ctx.env(ctx.folder("daemon-stop")) | env)
        shutil.rmtree(runtime, ignore_errors=True)
