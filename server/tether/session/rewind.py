"""``agent/rewind``: put a session's files, conversation or both back to before a step.

The files are those the checkpoint's step and every later one changed (``checkpoint``
records). Each goes back to its state before the earliest of those steps — bytes, mode, a
link as a link — unless someone else changed it since (it is not as the last step left it,
or it changed between two steps, or an editor holds unsaved typing in it): then it is a
conflict, left as it is unless forced. Everything a rewind needs is read from the store
and checked first; a damaged store restores nothing. Files are written through the
hardened writer (``writes/disk.py``: reached from their root, no link followed, compared
before the rename) or, when an editor has them open, through its buffers as undo does.

A rewind is logged as a step of its own (its change set: what it restored), so it can be
rewound too, and with a ``rewound`` record: the conversation is cut before the step's call
(the later turns stay in the log), or the model is told which files were put back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread

from tether_protocol import (
    Checkpoint,
    CheckpointFile,
    RewindResult,
    RewindWhat,
    UndoResult,
)

from ..host import Editor
from ..text.display import shown
from ..workspace.folders import Workspace, path_from_uri
from ..writes.disk import (
    Changed,
    Refused,
)
from ..writes.locks import path_lock
from .blobs import BlobStore, StoreDamaged
from .checkpoint_records import CheckpointFile as LoggedFile
from .checkpoint_records import CheckpointRecord, RewoundRecord
from .checkpoints import DEFAULT_MAX_FILE_BYTES, change_record, new_checkpoint_id
from .lock import SessionBusy
from .records import SessionData
from .restore import (
    Plan,
    chmod_if_there,
    confined_root,
    current_state,
    plans_of,
    restore_on_disk,
    same_state,
    through_editor,
)
from .scan import Change, entry_of
from .store import load
from .undo import undo_lines

if TYPE_CHECKING:
    from .writer import SessionLogWriter


class RewindRefused(ValueError):
    """A rewind that cannot be done as asked; the message names the field and why."""


def _time(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")


def _shown(ws: Workspace, path: Path) -> str:
    return ws.display(path)


def _change(file: LoggedFile) -> str:
    if file.before is None:
        return "created"
    if file.after is None:
        return "deleted"
    if (file.before.sha256, file.before.target) == (file.after.sha256, file.after.target):
        return "mode"
    return "modified"


def checkpoint_list(data: SessionData, ws: Workspace) -> list[Checkpoint]:
    """A session's checkpoints as the protocol lists them."""
    return [
        Checkpoint(
            id=record.id,
            run_id=record.run_id,
            step=record.step,
            time=_time(record.at),
            tool=record.tool,
            title=record.title,
            files=[
                CheckpointFile(
                    uri=f.uri,
                    path=_shown(ws, Path(f.path)),
                    change=_change(f),  # type: ignore[arg-type]
                    restorable=f.before is None or f.before.not_restorable is None,
                )
                for f in record.files
            ],
            incomplete=record.incomplete,
        )
        for record in data.checkpoints
    ]


@dataclass
class _Done:
    restored: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    not_restorable: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Rewound:
    """What ``rewind_session`` did, and the note the model reads (None: none)."""

    result: RewindResult
    note: str | None
    cut: bool


NOTE_LINES = 40
"""Files a rewind's note names one by one; the rest are counted."""
CALL_CHARS = 200


def model_note(
    record: CheckpointRecord, result: RewindResult, files_only: bool, ws: Workspace
) -> str:
    """The conversation's record of a rewind, in Tether's voice (undo's lines). File names
    come from whatever made the files: escaped (a name cannot start a line of its own) and
    capped; the call is the model's own, on one line."""

    def named(uri: str) -> str:
        path = path_from_uri(uri)
        return shown(uri if path is None else ws.display(path))

    undone = UndoResult(reverted=result.restored, conflicts=result.conflicts)
    lines = [f"- {line}" for line in undo_lines(undone, named)]
    lines += [f"- not restorable (not kept): {named(u)}" for u in result.not_restorable]
    lines += [f"- could not be written: {named(u)}" for u in result.failed]
    if len(lines) > NOTE_LINES:
        lines = [*lines[:NOTE_LINES], f"- and {len(lines) - NOTE_LINES} more files"]
    what = (
        "the files changed since then were put back"
        if files_only
        else "the conversation went back to that point; the files were left as they are"
    )
    call = shown(f"{record.tool}: {record.title}")
    call = call if len(call) <= CALL_CHARS else call[: CALL_CHARS - 1] + "…"
    return (
        f"[Tether: the user rewound to before step {record.step} of run {record.run_id} "
        f"({call}); {what}. Read a file again before relying on its content.]"
        + ("\n" + "\n".join(lines) if lines else "")
    )


async def rewind_session(
    writer: SessionLogWriter,
    session_id: str,
    checkpoint_id: str,
    restore: RewindWhat,
    ws: Workspace,
    editor: Editor,
    *,
    force: bool = False,
    cap: int = DEFAULT_MAX_FILE_BYTES,
) -> Rewound:
    """Rewind session ``session_id`` to before checkpoint ``checkpoint_id``;
    ``RewindRefused`` naming why it cannot (nothing done), ``StoreDamaged`` when the
    store lost what it needs (nothing done)."""
    await anyio.to_thread.run_sync(writer.flush)
    try:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(writer.locks.claim, session_id)
    except SessionBusy as exc:
        raise RewindRefused(f"sessionId: {exc}") from None
    try:
        data = await anyio.to_thread.run_sync(load, writer.state_dir, session_id)
        if data is None:
            raise RewindRefused(f"sessionId: unknown session {session_id!r}")
        ids = [c.id for c in data.checkpoints]
        if checkpoint_id not in ids:
            raise RewindRefused(
                f"checkpointId: unknown checkpoint {checkpoint_id!r} in session {session_id!r}"
            )
        at = ids.index(checkpoint_id)
        record = data.checkpoints[at]
        cut = restore in ("conversation", "both") and record.tool != "rewind"
        if cut and (record.call_id or "") not in data.call_at:
            raise RewindRefused(
                f"checkpointId: the conversation before {checkpoint_id!r} was compacted since; "
                "only its files can be rewound"
            )
        done = _Done()
        changed: list[Change] = []
        if restore in ("files", "both"):
            store = BlobStore(writer.state_dir)
            later = data.checkpoints[at:]
            changed = await _rewind_files(later, store, cap, ws, editor, force, done)
            if changed:
                rewind = CheckpointRecord(
                    id=new_checkpoint_id(),
                    run_id=record.run_id,
                    tool="rewind",
                    title=f"to before {checkpoint_id}",
                    at=datetime.now(UTC).timestamp(),
                    files=[change_record(c) for c in changed],
                )
                writer.append(session_id, rewind)
        result = RewindResult(
            restored=done.restored,
            conflicts=done.conflicts,
            not_restorable=done.not_restorable,
            failed=done.failed,
            conversation=cut,
            note=done.note,
        )
        note = model_note(record, result, restore == "files", ws) if restore != "both" else None
        writer.append(
            session_id,
            RewoundRecord(
                checkpoint_id=checkpoint_id, call_id=record.call_id if cut else None, note=note
            ),
        )
        return Rewound(result, note, cut)
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(writer.flush)
        writer.locks.release(session_id)


async def _rewind_files(
    records: list[CheckpointRecord],
    store: BlobStore,
    cap: int,
    ws: Workspace,
    editor: Editor,
    force: bool,
    result: _Done,
) -> list[Change]:
    plans = plans_of(records)
    todo: list[tuple[Plan, Path]] = []
    for plan in sorted(plans.values(), key=lambda p: str(p.path)):
        uri = plan.uri
        root = confined_root(ws, plan)
        if root is None:
            result.failed.append(uri)
            continue
        buffer = ws.buffers.get(plan.path)
        if buffer is not None:
            plan.buffer_text, plan.version = buffer.text, buffer.version
        try:
            plan.current = await anyio.to_thread.run_sync(current_state, plan, store, cap)
        except OSError as exc:  # the store cannot keep what the rewind replaces
            message = f"the checkpoint store cannot be written: {exc.strerror or exc}"
            raise StoreDamaged(message) from None
        if same_state(plan.current, plan.target):
            continue  # already as it was
        if (plan.between or not same_state(plan.current, plan.expected)) and not force:
            result.conflicts.append(uri)
        elif plan.target is not None and plan.target.not_restorable is not None:
            result.not_restorable.append(uri)
        else:
            todo.append((plan, root))
    for plan, _ in todo:  # everything checked before anything is written (one at a time)
        if plan.target is not None and plan.target.kind == "file":
            if plan.target.sha256 is None:
                raise StoreDamaged(f"the checkpoint store has no content for {plan.path.name}")
            await anyio.to_thread.run_sync(store.get, plan.target.sha256)
    # Removals first: a rename is put back by deleting the new name, then making the old.
    todo.sort(key=lambda item: item[0].target is not None)
    changed: list[Change] = []
    for plan, root in todo:
        uri = plan.uri
        data: bytes | None = None
        async with path_lock(plan.path):
            try:
                if plan.target is not None and plan.target.sha256 is not None:
                    data = await anyio.to_thread.run_sync(store.get, plan.target.sha256)
                if plan.buffer_text is not None and not (
                    plan.target is not None and plan.target.kind == "link"
                ):
                    ok = await through_editor(plan, root, data, editor)
                    if ok and plan.target is not None:
                        await anyio.to_thread.run_sync(
                            chmod_if_there, root, plan.path, plan.target.mode
                        )
                else:
                    await anyio.to_thread.run_sync(restore_on_disk, plan, root, data)
                    ok = True
            except (OSError, Refused, Changed, StoreDamaged) as exc:
                ok = False
                result.note = f"{_shown(ws, plan.path)}: {exc}"
        if not ok:
            result.failed.append(uri)
            continue
        result.restored.append(uri)
        after = await anyio.to_thread.run_sync(entry_of, plan.path, store, cap)
        changed.append(Change(plan.path, plan.current, after))
    return changed
