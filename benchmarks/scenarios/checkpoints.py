"""Checkpoints: what a step's checkpoint costs, measured in process on real folders.

A ``bash`` step's checkpoint is a scan of the workspace before the command (listing again
only the folders the kernel said changed since the last full scan) and a full scan after
it, which runs in a thread from the moment the command ends while the result goes back to
the model. What the user waits for is ``before`` plus ``after`` as they return, timed
around a command that changes one file, on a tree of 20,000 small files (the same tree
``search`` uses; --quick runs it too, with fewer steps; the 100,000-file rows only in full
runs). Between two steps, the model's turn is stood in for by waiting for the scan after
the step (``settle``), untimed; that scan, from the command's end to the checkpoint
recorded, is its own row, next to a bare ``os.scandir`` + ``lstat`` walk of the same tree
measured in the same process (the reference a full scan is compared with). The first scan
of a workspace reads and stores every file: reported alone. An ``edit_file`` step's
checkpoint keeps the file itself, before and after.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
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


def _bare_walk(root: Path) -> int:
    """Every entry under ``root`` listed and every file ``lstat``-ed: the least a full
    scan costs."""
    stack, files = [str(root)], 0
    while stack:
        with os.scandir(stack.pop()) as it:
            for entry in it:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(entry.path)
                else:
                    entry.stat(follow_symlinks=False)
                    files += 1
    return files


@dataclass
class _Bash:
    first: float = 0.0
    waited: list[float] = field(default_factory=list)
    """``before`` + ``after``, as each returned: what the user waits for."""
    behind: list[float] = field(default_factory=list)
    """From the command's end to the checkpoint recorded (the full scan after it)."""
    bare: list[float] = field(default_factory=list)


async def _bash_steps(
    checkpoints: SessionCheckpoints, root: Path, target: Path, steps: int
) -> _Bash:
    """The first checkpoint's time, then each later one's, each next to a bare walk."""
    found = _Bash()
    for step in range(steps + 1):
        began = time.monotonic_ns()
        taken = await checkpoints.before("bash", f"call_{step}", "touch", None, step)
        middle = time.monotonic_ns()
        await anyio.Path(target).write_text(f"changed {step}\n")  # the command: not timed
        resumed = time.monotonic_ns()
        await checkpoints.after(taken, ())
        returned = time.monotonic_ns()
        await checkpoints.settle()  # the model's turn, here only this scan
        settled = time.monotonic_ns()
        took = ms(middle - began + returned - resumed)
        if step == 0:
            found.first = ms(middle - began + settled - resumed)
            continue
        found.waited.append(took)
        found.behind.append(ms(settled - resumed))
        walked = time.monotonic_ns()
        await anyio.to_thread.run_sync(_bare_walk, root)
        found.bare.append(ms(time.monotonic_ns() - walked))
    return found


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


async def _tree(ctx: Context, files: int, steps: int) -> tuple[_Bash, list[float]]:
    root = ctx.folder(f"checkpoints-{files}")
    make_tree(root, files)
    state = ctx.folder(f"checkpoints-{files}-state")
    state.chmod(0o700)  # the user's alone, as Tether makes it (else it says so, mid-table)
    writer = SessionLogWriter(state)
    try:
        checkpoints = SessionCheckpoints(
            writer, "s-bench", "r-bench", Workspace([root], NoBuffers())
        )
        target = next(root.glob("pkg00/mod0/*.py"))
        bash = await _bash_steps(checkpoints, root, target, steps)
        edits = await _edit_steps(checkpoints, root, steps)
        await checkpoints.settle()
    finally:
        writer.close()
    ctx.log(f"{files} files: first scan {bash.first:.0f} ms")
    return bash, edits


def _rows(files: int, bash: _Bash, limit: float | None) -> list[Row]:
    shown = f"{files:,}-file workspace"
    return [
        Row.of(NAME, f"bash step, {shown} (waited)", "ms", bash.waited, limit=limit),
        Row.of(NAME, f"scan after a bash step, {shown} (in the background)", "ms", bash.behind),
        Row.of(NAME, f"bare os.scandir + lstat walk, {shown} (reference)", "ms", bash.bare),
        Row.of(NAME, f"first scan, {shown} (every file stored)", "ms", [bash.first], p95=False),
    ]


async def run(ctx: Context) -> list[Row]:
    steps = 5 if ctx.quick else 15
    files = 20_000  # the target's size, --quick too
    bash, edits = await _tree(ctx, files, steps)
    rows = _rows(files, bash, 50.0)
    rows.insert(1, Row.of(NAME, "edit_file step", "ms", edits, limit=5.0))
    if not ctx.quick:
        bash, _ = await _tree(ctx, 100_000, 5)
        rows += _rows(100_000, bash, None)
    return rows
