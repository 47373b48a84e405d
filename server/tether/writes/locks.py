"""One lock per file path, process-wide: edits of one file happen one after the other.

Every edit of a path (any run, any session, through the editor or the disk writer, and
undo) holds the path's lock around "recompute on the current text if it moved + apply", so
two approved edits can never both pass the "unchanged since read" check and overwrite each
other. Entries live only while someone holds or waits for them. The lock is not
re-entrant: code holding it must not take it again (the editor call inside does not).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

_locks: dict[Path, tuple[anyio.Lock, int]] = {}
"""path -> (its lock, how many tasks hold or wait for it)."""


@asynccontextmanager
async def path_lock(path: Path) -> AsyncIterator[None]:
    """Hold ``path``'s lock (an absolute, resolved path) for the duration of the block."""
    lock, users = _locks.get(path, (None, 0))
    if lock is None:
        lock = anyio.Lock()
    _locks[path] = (lock, users + 1)
    try:
        async with lock:
            yield
    finally:
        held, users = _locks[path]
        if users <= 1:
            del _locks[path]
        else:
            _locks[path] = (held, users - 1)


def locked_paths() -> list[Path]:
    """Paths whose lock is held or awaited right now (for tests and diagnostics)."""
    return list(_locks)
