"""Run the scenarios, print the table, write the JSON."""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from .harness import REPO, Context, compile_bytecode, make_context
from .report import Row, machine, table, write_json
from .scenarios import (
    big_buffer,
    cancel,
    checkpoints,
    cold_start,
    concurrency,
    daemon,
    exit,
    first_answer,
    memory,
    peers,
    providers,
    search,
    steps,
    stream,
)

SCENARIOS: tuple[ModuleType, ...] = (
    cold_start,
    steps,
    providers,
    first_answer,
    daemon,
    peers,
    stream,
    memory,
    big_buffer,
    search,
    concurrency,
    exit,
    cancel,
    checkpoints,
)
DEFAULT_JSON = REPO / "benchmarks" / "results" / "latest.json"


def scenario_key(module: ModuleType) -> str:
    """The short name ``--only`` takes: the module name (``cold_start``, ``big_buffer``…)."""
    return module.__name__.rsplit(".", 1)[-1]


async def run_all(ctx: Context, chosen: list[ModuleType]) -> tuple[list[Row], dict[str, Any]]:
    """Every chosen scenario in turn; a failing one is reported, the others still run."""
    rows: list[Row] = []
    timings: dict[str, Any] = {}
    for module in chosen:
        print(f"· {module.NAME} …", file=sys.stderr, flush=True)
        began = time.monotonic()
        try:
            found = await module.run(ctx)
        except Exception as exc:
            traceback.print_exc()
            found = [
                Row(module.NAME, "FAILED", "", float("nan"), note=f"{type(exc).__name__}: {exc}")
            ]
        rows += found
        timings[scenario_key(module)] = round(time.monotonic() - began, 2)
    return rows, timings


def main(argv: list[str] | None = None) -> int:
    """Entry point; exit status 0 when every scenario ran (targets missed are reported)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run")
    parser.add_argument(
        "--only",
        help="comma-separated scenarios: " + ", ".join(scenario_key(m) for m in SCENARIOS),
    )
    parser.add_argument("--json", type=Path, default=DEFAULT_JSON, help="where to write JSON")
    parser.add_argument("--scratch", type=Path, help="scratch folder (default: a temp folder)")
    parser.add_argument("--verbose", action="store_true", help="progress details on stderr")
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="DIR",
        help="profile each server with pyinstrument (pip install pyinstrument); reports in DIR",
    )
    args = parser.parse_args(argv)
    chosen = list(SCENARIOS)
    if args.only:
        wanted = {name.strip() for name in args.only.split(",")}
        unknown = wanted - {scenario_key(m) for m in SCENARIOS}
        if unknown:
            parser.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
        chosen = [m for m in SCENARIOS if scenario_key(m) in wanted]
    compile_bytecode()
    ctx = make_context(args.quick, args.verbose, args.scratch, args.profile)
    started = datetime.now(UTC)
    began = time.monotonic()
    try:
        rows, timings = asyncio.run(run_all(ctx, chosen))
    finally:
        if args.scratch is None:
            shutil.rmtree(ctx.scratch, ignore_errors=True)
    meta = {
        "started": started.isoformat(timespec="seconds"),
        "seconds": round(time.monotonic() - began, 1),
        "quick": args.quick,
        "machine": machine(),
        "scenario_seconds": timings,
        "notes": ctx.notes,
    }
    print(table(rows))
    for note in ctx.notes:
        print(f"note: {note}")
    write_json(args.json, rows, meta)
    print(f"\n{len(rows)} rows in {meta['seconds']} s; JSON: {args.json}", file=sys.stderr)
    return 1 if any(r.metric == "FAILED" for r in rows) else 0
