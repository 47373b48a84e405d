"""Checkpoints: what a step's checkpoint costs, measured in process on real folders.

A ``bash`` step's checkpoint is a scan of the workspace before the command and another
after it (by stat; contents read only where the stat changed), then the change set: its
cost is the two scans, timed around a command that changes one file, on a tree of 20,000
small files (the same tree ``search`` uses; the 100,000-file row is reported only, and
only in full runs). The first scan of a workspace reads and stores every file: reported
alone. An ``edit_file`` step's checkpoint keeps the file itself, before and after.
"""

from __future__ import annotations

import time
from pathlib import Path

import anyio

from tether.host import FileEdit, NoBuffers, TextChange
from tether.session.checkpoints import SessionCheckpoints
from tether.session.writer import SessionLogWriter
from tether.workspace.folders import Workspace

from ..harness import Context, ms
from ..report import Row
from .search import make_tree

NAME = "checkpoints"


async def _bash_steps(
    checkpoints: SessionCheckpoints, target: Path, steps: int
) -> tuple[float, list[float]]:
    """The first checkpoint's time, then each later one's (``before`` + ``after``)."""
    times: list[float] = []
    first = 0.0
    for step in range(steps + 1):
        began = time.monotonic_ns()
        taken = await checkpoints.before("bash", f"call_{step}", "touch", None, step)
        middle = time.monotonic_ns()
        await anyio.Path(target).write_text(f"changed {step}\n")  # the command: not timed
        resumed = time.monotonic_ns()
        await checkpoints.after(taken, ())
        took = ms(middle - began + time.monotonic_ns() - resumed)
        if step == 0:
            first = took
        else:
            times.append(took)
    return first, times


async def _edit_steps(checkpoints: SessionCheckpoints, root: Path, steps: int) -> list[float]:
    path = root / "edited.py"
    text = "".join(f"def f{n}(x):\n    return x + {n}\n" for n in range(200))
    path.write_text(text)
    times: list[float] = []
    for step in range(steps):
        edit = FileEdit(
            path=path,
            root=root,
            uri=path.as_uri(),
            base_text=text,
            version=None,
            create=False,
            changes=(TextChange(0, 0, f"# {step}\n"),),
        )
        began = time.monotonic_ns()
        taken = await checkpoints.before("edit_file", f"edit_{step}", "Edit", edit, step)
        middle = time.monotonic_ns()
        await anyio.Path(path).write_text(edit.new_text)
        resumed = time.monotonic_ns()
        await checkpoints.after(taken, (edit,))
        times.append(ms(middle - began + time.monotonic_ns() - resumed))
        text = edit.new_text
    return times


async def _tree(ctx: Context, files: int, steps: int) -> tuple[float, list[float], list[float]]:
    root = ctx.folder(f"checkpoints-{files}")
    make_tree(root, files)
    state = ctx.folder(f"checkpoints-{files}-state")
    writer = SessionLogWriter(state)
    try:
        checkpoints = SessionCheckpoints(
            writer, "s-bench", "r-bench", Workspace([root], NoBuffers())
        )
        target = next(root.glob("pkg00/mod0/*.py"))
        first, bash = await _bash_steps(checkpoints, target, steps)
        edits = await _edit_steps(checkpoints, root, steps)
    finally:
        writer.close()
    ctx.log(f"{files} files: first scan {first:.0f} ms")
    return first, bash, edits


async def run(ctx: Context) -> list[Row]:
    steps = 5 if ctx.quick else 15
    files = 2_000 if ctx.quick else ctx.sizes.search_files
    first, bash, edits = await _tree(ctx, files, steps)
    shown = f"{files:,}-file workspace"
    rows = [
        Row.of(NAME, f"bash step, {shown}", "ms", bash, limit=50.0),
        Row.of(NAME, "edit_file step", "ms", edits, limit=5.0),
        Row.of(NAME, f"first scan, {shown} (every file stored)", "ms", [first], p95=False),
    ]
    if not ctx.quick:
        first, bash, _ = await _tree(ctx, 100_000, 5)
        rows.append(Row.of(NAME, "bash step, 100,000-file workspace", "ms", bash))
        rows.append(Row.of(NAME, "first scan, 100,000-file workspace", "ms", [first], p95=False))
    return rows
