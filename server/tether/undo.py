"""``agent/undo``: apply the inverse of a run's edits, newest first, never over a change."""

from __future__ import annotations

from pathlib import Path

import anyio.to_thread

from tether_protocol import UndoResult

from .diskedit import has_bom
from .errors import ToolError
from .host import Editor, FileEdit
from .sessionlog import EditRecord
from .textedit import minimal_changes
from .workspace import Workspace


async def _current_text(ws: Workspace, path: Path) -> tuple[str | None, int | None]:
    try:
        snapshot = await ws.read_text(path)
    except ToolError:
        return None, None
    return snapshot.text, snapshot.version if snapshot.from_buffer else None


async def undo_edits(edits: list[EditRecord], ws: Workspace, editor: Editor) -> UndoResult:
    """Revert ``edits`` (one run's, oldest first) newest first; changed files are conflicts."""
    reverted: list[str] = []
    conflicts: list[str] = []
    for record in reversed(edits):
        path = Path(record.path)
        if record.uri in conflicts:
            continue  # an older edit of a file already in conflict stays too
        text, version = await _current_text(ws, path)
        if text != record.after:
            conflicts.append(record.uri)
            continue
        if record.created:
            outcome = await editor.delete_file(path, record.uri, version)
        else:
            bom = version is None and await anyio.to_thread.run_sync(has_bom, path)
            inverse = FileEdit(
                path=path,
                uri=record.uri,
                base_text=record.after,
                new_text=record.before,
                version=version,
                create=False,
                changes=minimal_changes(record.after, record.before),
                bom=bom,
            )
            outcome = await editor.apply_edit(inverse, f"Tether: undo {path.name}")
        if not outcome.applied:
            conflicts.append(record.uri)
        elif record.uri not in reverted:
            reverted.append(record.uri)
    return UndoResult(reverted=[u for u in reverted if u not in conflicts], conflicts=conflicts)
