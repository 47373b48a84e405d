"""A cancelled ``search`` leaves nothing running: ripgrep's process group is killed.

A slow ``rg`` (here a stand-in that starts a child and sleeps) must not keep the run, or
the processes, alive after ``agent/cancel`` or ``timeoutSeconds`` cancels the tool.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import anyio
import pytest

from tests.waiting import alive, wait_until
from tether.host import MemoryBuffers
from tether.tools.base import ToolDeps
from tether.tools.search import ENGINE_ENV, Search, SearchArgs
from tether.workspace.folders import Workspace


def slow_rg(tmp_path: Path) -> tuple[str, Path]:
    """An ``rg`` that records its and its child's pids, then waits (long) for the child."""
    pids = tmp_path / "pids"
    script = tmp_path / "slow-rg"
    script.write_text(
        f"#!/bin/sh\nsleep 300 &\necho $$ $! > {pids}.tmp\nmv {pids}.tmp {pids}\nwait\n"
    )
    script.chmod(0o755)
    return str(script), pids


async def test_cancel_kills_rg_and_its_children(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("needle\n")
    rg, pids = slow_rg(tmp_path)
    ctx = ToolDeps(workspace=Workspace([root], MemoryBuffers([])), run_id="run-1")
    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(Search(rg_path=rg).run, SearchArgs(pattern="needle"), ctx)
            await wait_until(pids.exists, "the stand-in rg to start")
            scope.cancel()  # what agent/cancel or timeoutSeconds does to the tool's task
    # Back from the cancel (a search that waited for the stand-in's 300 s would hit the test's
    # own timeout; a bound on how long it took would fail on a loaded machine).
    assert scope.cancelled_caught
    shell, child = (int(p) for p in pids.read_text().split())
    try:
        await wait_until(
            lambda: not (alive(shell) or alive(child)), "rg and its child to be killed"
        )
    finally:  # when the test fails, leave nothing running
        for pid in (shell, child):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_engine_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENGINE_ENV, "python")
    assert Search().rg_path is None
    assert Search(rg_path="/opt/rg").rg_path == "/opt/rg"  # an explicit engine wins
    monkeypatch.delenv(ENGINE_ENV)
    assert Search().rg_path is not None  # rg is a dependency: always there
    assert os.path.basename(Search().rg_path or "") == "rg"
