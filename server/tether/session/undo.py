"""``agent/undo``: apply the inverse of a run's edits, newest first, never over a change.

A session log is data, not authority: every path it names is confined to the workspace
again (resolved, inside a root, the URI matching the path) and written through the same
per-path lock and link-refusing disk writer as any edit; anything else is refused.
An edit record holds the changed window and the hashes of the texts around it (older logs,
the whole texts): the file must hash to the edit's result, then the window is put back.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread

from tether_protocol import UndoResult

from ..errors import ToolError
from ..host import Editor, EditOutcome, FileEdit
from ..text.edit import minimal_changes
from ..workspace.folders import Workspace
from ..writes.disk import has_bom
from ..writes.locks import path_lock
from .records import EditRecord, UndoneRecord
from .store import find_run, load

if TYPE_CHECKING:
    from .writer import SessionLogWriter


class UnknownRun(LookupError):
    """``agent/undo`` of a run no stored session has; the message names the field."""


async def _current_text(ws: Workspace, path: Path) -> tuple[str | None, int | None]:
    try:
        snapshot = await ws.read_text(path)
    except ToolError:
        return None, None
    return snapshot.text, snapshot.version if snapshot.from_buffer else None


def confined(ws: Workspace, record: EditRecord) -> Path | None:
    """The record's path when it is a workspace path reached without links; None else."""
    logged = Path(record.path)
    if not logged.is_absolute():
        return None
    try:
        path = ws.resolve(record.path)
    except ToolError:
        return None
    if path != logged or ws.uri_for(path) != record.uri:
        return None  # a link on the way, or a URI naming another file than the path
    return path


async def _revert(record: EditRecord, path: Path, ws: Workspace, editor: Editor) -> str:
    """Undo one edit of a locked path: "reverted", "conflict" or "not-found"."""
    text, version = await _current_text(ws, path)
    is_after = await anyio.to_thread.run_sync(record.is_after, text)  # hashes a whole file
    if text is None or not is_after:
        if record.confirmed:
            return "conflict"  # someone changed it since
        is_before = await anyio.to_thread.run_sync(record.is_before, text)
        landed_not = is_before or (record.created and text is None)
        return "skipped" if landed_not else "not-found"
    outcome: EditOutcome
    root = ws.root_of(path) or ws.root
    if record.created:
        outcome = await editor.delete_file(path, record.uri, version, root)
    else:
        bom = version is None and await anyio.to_thread.run_sync(has_bom, path)
        before = record.text_before(text)
        inverse = FileEdit(
            path=path,
            root=root,
            uri=record.uri,
            base_text=text,
            new_text=before,
            version=version,
            create=False,
            changes=minimal_changes(text, before),
            bom=bom,
        )
        outcome = await editor.apply_edit(inverse, f"Tether: undo {path.name}")
    return "reverted" if outcome.applied else "conflict"


async def undo_edits(edits: list[EditRecord], ws: Workspace, editor: Editor) -> UndoResult:
    """Revert ``edits`` (one run's, oldest first) newest first; changed files are conflicts,
    files the log places outside the workspace are refused."""
    if not edits:
        return UndoResult(note="the run made no recorded edits; nothing to undo")
    reverted: list[str] = []
    left: dict[str, list[str]] = {"conflict": [], "not-found": [], "refused": []}
    for record in reversed(edits):
        if any(record.uri in uris for uris in left.values()):
            continue  # an older edit of a file already left alone stays too
        path = confined(ws, record)
        if path is None:
            left["refused"].append(record.uri)
            continue
        async with path_lock(path):
            what = await _revert(record, path, ws, editor)
        if what in left:
            left[what].append(record.uri)
        elif what == "reverted" and record.uri not in reverted:
            reverted.append(record.uri)
    kept = {uri for uris in left.values() for uri in uris}
    return UndoResult(
        reverted=[u for u in reverted if u not in kept],
        conflicts=left["conflict"],
        not_found=left["not-found"],
        refused=left["refused"],
    )


async def undo_run(
    writer: SessionLogWriter, run_id: str, ws: Workspace, editor: Editor
) -> UndoResult:
    """Revert a finished run's applied edits, found in the log (also after a restart), and
    log that it was undone; ``UnknownRun`` when no stored session has it."""
    await anyio.to_thread.run_sync(writer.flush)
    state_dir = writer.state_dir
    session_id = await anyio.to_thread.run_sync(find_run, state_dir, run_id)
    data = (
        None if session_id is None else await anyio.to_thread.run_sync(load, state_dir, session_id)
    )
    if data is None or session_id is None:
        raise UnknownRun(f"runId: unknown run {run_id!r}")
    if run_id in data.undone:
        return UndoResult(note=f"run {run_id!r} was already undone")
    result = await undo_edits([e for e in data.edits if e.run_id == run_id], ws, editor)
    writer.append(session_id, UndoneRecord(run_id=run_id))
    return result
