"""``tether serve`` with benchmark-only patches, chosen by environment variables.

* ``BENCH_STAMPS=FILE``: note ``time.monotonic_ns()`` as the scripted provider hands each
  text delta to the loop, and write the stamps to FILE at exit (the stream scenario's
  provider→client latency). The wrapper costs one more async-generator hop per delta.
* ``BENCH_NO_RG=1``: no ripgrep, so ``search`` takes its Python fallback.
* ``BENCH_PROFILE=FILE``: profile the server with pyinstrument (``pip install
  pyinstrument``; not a dependency) and write its text report to FILE at exit.

Everything else is the real server: ``tether.cli.main(["serve"])``.
"""

from __future__ import annotations

import atexit
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path


def _stamp_deltas(target: Path) -> None:
    from tether.providers.base import ModelDelta, ModelRequest, TextDelta
    from tether.providers.scripted import ScriptedProvider

    stamps: list[int] = []
    original = ScriptedProvider.stream

    async def stream(self: ScriptedProvider, request: ModelRequest) -> AsyncIterator[ModelDelta]:
        async for delta in original(self, request):
            if isinstance(delta, TextDelta):
                stamps.append(time.monotonic_ns())
            yield delta

    ScriptedProvider.stream = stream  # type: ignore[method-assign]
    atexit.register(lambda: target.write_text("\n".join(map(str, stamps))))


def _profile(target: Path) -> None:
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.0002, async_mode="disabled")
    profiler.start()

    def report() -> None:
        profiler.stop()
        target.write_text(profiler.output_text(unicode=True, show_all=False))

    atexit.register(report)


def main() -> int:
    """Apply the patches the environment asks for, then serve."""
    profile = os.environ.get("BENCH_PROFILE")
    if profile:
        _profile(Path(profile))
    stamps = os.environ.get("BENCH_STAMPS")
    if stamps:
        _stamp_deltas(Path(stamps))
    if os.environ.get("BENCH_NO_RG"):
        import tether.tools.search

        tether.tools.search.find_rg = lambda: None
    from tether.cli import main as tether_main

    return tether_main(["serve"])


if __name__ == "__main__":
    raise SystemExit(main())
