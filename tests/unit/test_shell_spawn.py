"""A command cancelled while it is being started leaves nothing running.

asyncio kills only the process it started when ``open_process`` itself is cancelled, and
hands back nothing: the command's process group (its own session) would run on unseen.
The spawn is shielded, so the group is stopped by ``run_command`` like any other cancel.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from tether.tools import shell


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


async def test_a_cancel_during_the_spawn_stops_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[anyio.abc.Process] = []
    real_open_process = anyio.open_process

    async def open_then_get_cancelled(*args: Any, **kwargs: Any) -> anyio.abc.Process:
        process = await real_open_process(*args, **kwargs)
        started.append(process)
        scope.cancel()  # the run is cancelled right as the process came up...
        await anyio.lowlevel.checkpoint()  # ...and this await is where it lands, unshielded
        return process

    monkeypatch.setattr(shell.anyio, "open_process", open_then_get_cancelled)
    with anyio.CancelScope() as scope:
        await shell.run_command("sleep 300", tmp_path, timeout=60)
    [process] = started
    try:
        with anyio.fail_after(10):
            while alive(process.pid):
                await anyio.sleep(0.02)  # polling the observable condition, bounded
    finally:
        if alive(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
        with anyio.CancelScope(shield=True):
            await process.aclose()
