"""A FIFO a test's command waits on (``read word < gate``), opened by the test once it has
seen what it waited for: the command goes on when the test says so, never after a delay."""

from __future__ import annotations

import errno
import os
from pathlib import Path

from .waiting import wait_until


def gate(folder: Path) -> Path:
    """A FIFO named ``gate`` in ``folder``."""
    path = folder / "gate"
    os.mkfifo(path)
    return path


def _opened(path: Path) -> bool:
    """Write ``go`` to ``path`` if something reads it now (never blocks)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # nothing reads it (yet)
            return False
        raise
    try:
        os.write(fd, b"go\n")
    finally:
        os.close(fd)
    return True


async def release(path: Path, within: float = 10.0) -> None:
    """Let the command reading ``path`` go on; fails when nothing reads it within ``within``
    seconds (the command never got there)."""
    await wait_until(lambda: _opened(path), f"the command to read {path.name}", within)
