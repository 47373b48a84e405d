"""What every scenario shares: sizes, temporary folders, the server's environment, scripts."""

from __future__ import annotations

import compileall
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .client import TETHER, Server

REPO = Path(__file__).resolve().parent.parent
SHIM = (sys.executable, "-m", "benchmarks.shim")
"""``tether serve`` with benchmark-only patches chosen by environment variables."""


@dataclass
class Sizes:
    """How much each scenario does; ``quick`` shrinks everything for a smoke run."""

    cold_starts: int = 15
    steps: int = 500
    step_runs: int = 3
    provider_runs: int = 15
    first_prompts: int = 15
    """Fresh servers whose first prompt, and a later one after the same pause, are
    measured (providers)."""
    deltas: int = 20_000
    stream_runs: int = 3
    memory_runs: int = 1000
    big_buffer_mb: float = 10.0
    big_buffer_changes: int = 30
    big_buffer_reads: int = 10
    big_buffer_edits: int = 5
    search_files: int = 20_000
    search_runs: int = 7
    concurrent_runs: int = 8
    concurrent_steps: int = 100
    concurrency_rounds: int = 2
    exits: int = 5
    cancels: int = 5
    peer_runs: int = 5

    @classmethod
    def quick(cls) -> Sizes:
        """A few seconds per scenario: checks that everything runs, numbers are rough."""
        return cls(
            cold_starts=2,
            steps=20,
            step_runs=1,
            provider_runs=2,
            first_prompts=2,
            deltas=500,
            stream_runs=1,
            memory_runs=10,
            big_buffer_mb=0.2,
            big_buffer_changes=3,
            big_buffer_reads=2,
            big_buffer_edits=1,
            search_files=200,
            search_runs=2,
            concurrent_runs=2,
            concurrent_steps=5,
            concurrency_rounds=1,
            exits=1,
            cancels=1,
            peer_runs=1,
        )


@dataclass
class Context:
    """One benchmark run: sizes, a scratch folder, and what to log."""

    sizes: Sizes
    quick: bool
    scratch: Path
    verbose: bool = False
    profile: Path | None = None
    """Profile every server (``--profile DIR``): one pyinstrument report per server."""
    notes: list[str] = field(default_factory=list)
    _servers: int = 0

    def folder(self, name: str) -> Path:
        """A fresh, empty folder under the scratch folder."""
        path = self.scratch / name
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)
        return path.resolve()

    def env(self, state: Path, **extra: str) -> dict[str, str]:
        """The server's environment: no TETHER_* or API keys leaking in, state in ``state``
        (the user's alone, as Tether makes it: else it says so on stderr, mid-table)."""
        state.mkdir(parents=True, exist_ok=True)
        state.chmod(0o700)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("TETHER_", "BENCH_")) and not k.endswith("_API_KEY")
        }
        env["TETHER_STATE_DIR"] = str(state)
        env["TETHER_DAEMON"] = "0"  # in-process unless a scenario turns the daemon on
        env["PYTHONPATH"] = os.pathsep.join(
            [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
        env.update(extra)
        return env

    @contextlib.asynccontextmanager
    async def server(
        self, name: str, cwd: Path, *, shim: bool = False, **env: str
    ) -> AsyncIterator[Server]:
        """A ``tether serve`` (under ``benchmarks.shim`` if asked, or when profiling) with
        its own state folder; shut down and reaped at the end."""
        self._servers += 1
        if self.profile is not None:
            self.profile.mkdir(parents=True, exist_ok=True)
            env["BENCH_PROFILE"] = str(self.profile / f"{self._servers:02d}-{name}.txt")
        argv = SHIM if shim or self.profile is not None else TETHER
        server = await Server.start(
            argv, env=self.env(self.folder(f"{name}-state"), **env), cwd=cwd
        )
        try:
            yield server
        finally:
            await server.close(patience=120 if self.profile is not None else 5)

    def log(self, message: str) -> None:
        """Progress on stderr (only with ``--verbose``)."""
        if self.verbose:
            print(f"  {message}", file=sys.stderr, flush=True)


def make_context(
    quick: bool, verbose: bool, scratch: Path | None = None, profile: Path | None = None
) -> Context:
    """A context with a fresh scratch folder (the caller removes it)."""
    base = scratch or Path(tempfile.mkdtemp(prefix="tether-bench-"))
    sizes = Sizes.quick() if quick else Sizes()
    return Context(sizes, quick, base, verbose, profile.resolve() if profile else None)


def compile_bytecode() -> None:
    """Byte-compile Tether's sources, as installing a wheel does.

    An editable install under ``PYTHONDONTWRITEBYTECODE=1`` would otherwise compile every
    module from source at each start, which is not what a user's installed Tether does.
    """
    for package in ("server/tether", "protocol/tether_protocol", "benchmarks"):
        compileall.compile_dir(REPO / package, quiet=1)


def script(*turns: dict[str, Any], **options: Any) -> dict[str, Any]:
    """A scripted-provider script (camelCase, as ``initializationOptions.script``)."""
    return {"turns": list(turns), **options}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    """One scripted tool call."""
    return {"name": name, "arguments": arguments}


def read_steps(count: int, path: str) -> list[dict[str, Any]]:
    """``count`` turns of one ``read_file`` each, all different (no repeat detection)."""
    return [{"toolCalls": [call("read_file", path=path, limit=i + 1)]} for i in range(count)]


def allow(params: Any) -> dict[str, Any]:
    """Answer ``agent/approve``: allow."""
    return {"decision": "allow"}


def ms(ns: float) -> float:
    """Nanoseconds → milliseconds."""
    return ns / 1e6


def small_file(lines: int = 12) -> str:
    """A small Python file."""
    body = [f"def f{i}(x):\n    return x + {i}\n" for i in range(lines // 2)]
    return "".join(body)


def kinds(events: Sequence[Any]) -> list[str]:
    """The kinds of events, in order."""
    return [e.kind for e in events]
