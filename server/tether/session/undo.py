"""``agent/undo``: apply the inverse of a run's edits, newest first, never over a change.

A file changed since the run gets back the hunks of the run's edit nobody touched
(``hunks.py``); the touched ones stay, and so do the changes made since.

A session log is data, not authority: every path it names is confined to the workspace
again (resolved, inside a root, the URI matching the path) and written through the same
per-path lock and link-refusing disk writer as any edit; anything else is refused.
An edit record holds the changed window and the hashes of the texts around it (older logs,
the whole texts): the file must hash to the edit's result, then the window is put back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread

from tether_protocol import PartialUndo, UndoResult

from ..errors import ToolError
from ..host import Editor, EditOutcome, FileEdit
from ..text.edit import minimal_changes
from ..workspace.folders import Workspace, path_from_uri
from ..writes.disk import has_bom
from ..writes.locks import path_lock
from .hunks import revert_untouched
from .lock import SessionBusy
from .records import EditRecord, UndoneRecord
from .store import find_run, load

if TYPE_CHECKING:
    from .writer import SessionLogWriter


class UnknownRun(LookupError):
    """``agent/undo`` of a run no stored session has, or of a session another process has
    open (it would write to that session's log); the message names the field and why."""


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


@dataclass
class _FileUndo:
    """What undo did so far with one file's edits (newest first)."""

    left: str | None = None
    """Why its older edits are left alone: "conflict", "not-found" or "refused"."""
    whole: list[EditRecord] = field(default_factory=list)
    """Edits put back whole."""
    reverted_hunks: int = 0
    kept_hunks: int = 0
    partial: bool = False
    """Some edit's untouched hunks were put back, changes made since kept."""
    kept: list[EditRecord] = field(default_factory=list)
    """Edits left whole after a partial undo of a newer one."""


def hunks_note(reverted: int, kept: int) -> str:
    """What a partial undo did with a file changed since the run, in words (every front)."""
    put_back = f"{reverted} hunk{'s' * (reverted != 1)} put back"
    if not kept:
        return f"{put_back}, the changes made since kept"
    return f"{put_back}, {kept} changed since kept as they are"


def _hunk_count(record: EditRecord) -> int:
    found = record.window.hunks() if record.window is not None else None
    return len(found) if found else 1


def _edit_to(
    record: EditRecord,
    path: Path,
    root: Path,
    text: str,
    version: int | None,
    new_text: str,
    bom: bool,
) -> FileEdit:
    return FileEdit(
        path=path,
        root=root,
        uri=record.uri,
        base_text=text,
        version=version,
        create=False,
        changes=minimal_changes(text, new_text),
        bom=bom,
        after=new_text,
    )


async def _revert_untouched(
    record: EditRecord, path: Path, text: str, version: int | None, ws: Workspace, editor: Editor
) -> tuple[str, int, int]:
    """The file changed since ``record``: put back the hunks nobody touched."""
    found = record.window.hunks() if record.window is not None else None
    if not found:
        return "conflict", 0, 0  # an older log, a created file or a large edit: as a whole
    result = await anyio.to_thread.run_sync(revert_untouched, text, found)
    if result.reverted == 0:
        return "conflict", 0, result.kept
    bom = version is None and await anyio.to_thread.run_sync(has_bom, path)
    root = ws.root_of(path) or ws.root
    inverse = _edit_to(record, path, root, text, version, result.text, bom)
    outcome = await editor.apply_edit(inverse, f"Tether: undo {path.name} (untouched hunks)")
    if not outcome.applied:
        return "conflict", 0, len(found)
    return "partial", result.reverted, result.kept


async def _revert(
    record: EditRecord, path: Path, ws: Workspace, editor: Editor
) -> tuple[str, int, int]:
    """Undo one edit of a locked path: "reverted", "partial" (with the hunks put back and
    kept), "conflict", "skipped" or "not-found"."""
    text, version = await _current_text(ws, path)
    is_after = await anyio.to_thread.run_sync(record.is_after, text)  # hashes a whole file
    if text is None or not is_after:
        if record.confirmed:
            if text is None:
                return "conflict", 0, 0
            return await _revert_untouched(record, path, text, version, ws, editor)
        is_before = await anyio.to_thread.run_sync(record.is_before, text)
        landed_not = is_before or (record.created and text is None)
        return ("skipped" if landed_not else "not-found"), 0, 0
    outcome: EditOutcome
    root = ws.root_of(path) or ws.root
    if record.created:
        outcome = await editor.delete_file(path, record.uri, version, root)
    else:
        bom = version is None and await anyio.to_thread.run_sync(has_bom, path)
        inverse = _edit_to(record, path, root, text, version, record.text_before(text), bom)
        outcome = await editor.apply_edit(inverse, f"Tether: undo {path.name}")
    return ("reverted" if outcome.applied else "conflict"), 0, 0


async def undo_edits(edits: list[EditRecord], ws: Workspace, editor: Editor) -> UndoResult:
    """Revert ``edits`` (one run's, oldest first) newest first; of a file changed since,
    the hunks nobody touched; files the log places outside the workspace are refused."""
    if not edits:
        return UndoResult(note="the run made no recorded edits; nothing to undo")
    files: dict[str, _FileUndo] = {}
    for record in reversed(edits):
        state = files.setdefault(record.uri, _FileUndo())
        if state.left is not None:
            continue  # an older edit of a file already left alone stays too
        if state.partial and (state.kept_hunks > 0 or state.kept):
            state.kept.append(record)  # its text is not as the run left it: keep the rest
            continue
        path = confined(ws, record)
        if path is None:
            state.left = "refused"
            continue
        async with path_lock(path):
            what, reverted, kept = await _revert(record, path, ws, editor)
        if what == "reverted":
            state.whole.append(record)
        elif what == "partial":
            state.partial = True
            state.reverted_hunks += reverted
            state.kept_hunks += kept
        elif what in ("conflict", "not-found"):
            if state.partial:
                state.kept.append(record)
            else:
                state.left = what
    result = UndoResult()
    for uri, state in files.items():
        if state.partial:
            reverted = state.reverted_hunks + sum(_hunk_count(r) for r in state.whole)
            kept = state.kept_hunks + sum(_hunk_count(r) for r in state.kept)
            result.partial.append(PartialUndo(uri=uri, reverted_hunks=reverted, kept_hunks=kept))
        elif state.left == "conflict":
            result.conflicts.append(uri)
        elif state.left == "not-found":
            result.not_found.append(uri)
        elif state.left == "refused":
            result.refused.append(uri)
        elif state.whole:
            result.reverted.append(uri)
    return result


@dataclass(frozen=True, slots=True)
class Undone:
    """What ``undo_run`` did: the session the run was in, the result per file and the note
    the session's model reads before its next prompt (None when nothing was undone)."""

    session_id: str | None
    result: UndoResult
    note: str | None = None


def undo_lines(result: UndoResult, shown: Callable[[str], str]) -> list[str]:
    """What undo did with each file, a line each (``shown``: a URI as the reader knows it)."""
    lines = [f"put back: {shown(uri)}" for uri in result.reverted]
    lines += [
        f"partly put back: {shown(p.uri)} ({hunks_note(p.reverted_hunks, p.kept_hunks)})"
        for p in result.partial
    ]
    lines += [f"left alone (changed since): {shown(uri)}" for uri in result.conflicts]
    lines += [f"left alone (not found): {shown(uri)}" for uri in result.not_found]
    lines += [f"refused (outside the folder): {shown(uri)}" for uri in result.refused]
    return lines


def model_note(run_id: str, result: UndoResult, ws: Workspace) -> str:
    """The conversation's record of an undo, in Tether's voice (not the user's words)."""

    def shown(uri: str) -> str:
        path = path_from_uri(uri)
        return uri if path is None else ws.display(path)

    lines = "\n".join(f"- {line}" for line in undo_lines(result, shown))
    return (
        f"[Tether: the user undid the edits of an earlier run ({run_id}). What you wrote "
        "then is no longer in these files; read a file again before relying on its content.]"
        f"\n{lines}"
    )


async def undo_run(writer: SessionLogWriter, run_id: str, ws: Workspace, editor: Editor) -> Undone:
    """Revert a finished run's applied edits, found in the log (also after a restart), and
    log that it was undone, with the note its session's model reads next; ``UnknownRun``
    when no stored session has it."""
    await anyio.to_thread.run_sync(writer.flush)
    state_dir = writer.state_dir
    session_id = await anyio.to_thread.run_sync(find_run, state_dir, run_id)
    if session_id is None:
        raise UnknownRun(f"runId: unknown run {run_id!r}")
    try:  # the note goes to the session's log: not while another process has it open
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(writer.locks.claim, session_id)
    except SessionBusy as exc:
        raise UnknownRun(f"runId: run {run_id!r} is not undone here: {exc}") from None
    try:
        data = await anyio.to_thread.run_sync(load, state_dir, session_id)
        if data is None:
            raise UnknownRun(f"runId: unknown run {run_id!r}")
        if run_id in data.undone:
            return Undone(session_id, UndoResult(note=f"run {run_id!r} was already undone"))
        result = await undo_edits([e for e in data.edits if e.run_id == run_id], ws, editor)
        note = model_note(run_id, result, ws)
        writer.append(session_id, UndoneRecord(run_id=run_id, note=note))
        return Undone(session_id, result, note)
    finally:
        with anyio.CancelScope(shield=True):  # written before another process may take it
            await anyio.to_thread.run_sync(writer.flush)
        writer.locks.release(session_id)
