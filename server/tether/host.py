"""The Host seam: what the outside world offers the loop and the tools.

The LSP layer implements these protocols over JSON-RPC; unit tests use in-memory ones.
Nothing here (nor in the loop, tools or providers) imports pygls or lsprotocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from tether_protocol import RunEvent


@dataclass(frozen=True, slots=True)
class Buffer:
    """An open editor buffer as the user sees it (possibly unsaved)."""

    path: Path
    uri: str
    text: str
    version: int | None


class Buffers(Protocol):
    """The editor's open buffers, looked up by absolute, resolved path."""

    def get(self, path: Path) -> Buffer | None:
        """The open buffer for ``path``, or None when the file is not open."""
        ...

    def all(self) -> Sequence[Buffer]:
        """Every open buffer backed by a file."""
        ...


class EventSink(Protocol):
    """Where a run's events go (editor notifications, the session log, a terminal)."""

    def publish(self, event: RunEvent) -> None:
        """Deliver one event; must not block."""
        ...


class NoBuffers:
    """A host with no editor: every read goes to disk."""

    def get(self, path: Path) -> Buffer | None:
        return None

    def all(self) -> Sequence[Buffer]:
        return ()


class MemoryBuffers:
    """Open buffers held in a dict (tests and headless use)."""

    def __init__(self, buffers: Sequence[Buffer] = ()) -> None:
        self._by_path: dict[Path, Buffer] = {b.path: b for b in buffers}

    def put(self, buffer: Buffer) -> None:
        """Open (or replace) a buffer."""
        self._by_path[buffer.path] = buffer

    def get(self, path: Path) -> Buffer | None:
        return self._by_path.get(path)

    def all(self) -> Sequence[Buffer]:
        return tuple(self._by_path.values())
