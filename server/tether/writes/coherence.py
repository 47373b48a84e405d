"""Keep the editor's buffers and the disk coherent around a shell command.

A command sees the disk, not the editor. Before it runs, unsaved buffers are noted (the
model is told the command saw the disk version); after it, a clean buffer whose file the
command changed is read from disk from then on (the editor reloads it), and a buffer with
unsaved changes whose file the command also changed is reported as a conflict — neither
side is overwritten.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread

from ..workspace.folders import Workspace


@dataclass(frozen=True, slots=True)
class BufferState:
    """An open buffer and its file on disk, just before a command."""

    path: Path
    buffer_text: str
    disk_text: str | None


def _disk_text(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8-sig", errors="replace")
    except OSError:
        return None


def _read_all(paths: list[Path]) -> list[str | None]:
    return [_disk_text(p) for p in paths]


async def before_command(ws: Workspace) -> list[BufferState]:
    """The open buffers and their disk files, as the command is about to see them."""
    buffers = list(ws.buffers.all())
    disk = await anyio.to_thread.run_sync(_read_all, [b.path for b in buffers])
    return [BufferState(b.path, b.text, d) for b, d in zip(buffers, disk, strict=True)]


def unsaved_note(ws: Workspace, states: list[BufferState]) -> str:
    """Which files the command saw in their saved version while the editor shows another."""
    dirty = [ws.display(s.path) for s in states if s.buffer_text != s.disk_text]
    if not dirty:
        return ""
    return (
        "Note: these files have unsaved changes in the editor; the command saw the saved "
        "version on disk: " + ", ".join(dirty)
    )


async def after_command(ws: Workspace, states: list[BufferState]) -> str:
    """Reconcile buffers with what the command did to the disk; a note for the model."""
    disk = await anyio.to_thread.run_sync(_read_all, [s.path for s in states])
    reloaded: list[str] = []
    conflicts: list[str] = []
    for state, now in zip(states, disk, strict=True):
        if now == state.disk_text:
            continue
        if state.buffer_text == state.disk_text:
            ws.buffers.mark_stale(state.path)
            reloaded.append(ws.display(state.path))
        else:
            conflicts.append(ws.display(state.path))
    notes = []
    if reloaded:
        notes.append(
            "The command changed these open files; from now on they are read from disk: "
            + ", ".join(reloaded)
        )
    if conflicts:
        notes.append(
            "Conflict: the command changed these files on disk while the editor holds unsaved "
            "changes to them; neither version was overwritten, ask the user which to keep: "
            + ", ".join(conflicts)
        )
    return "\n".join(notes)
