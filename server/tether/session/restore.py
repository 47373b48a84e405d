"""Putting a rewind's files back, one path at a time: the plan for each path (its state
before the first step rewound, the state the last one left, someone's change between), its
state now (the editor's unsaved buffer counts), and the write — through the confined
writer (no link followed, compared again before the atomic rename) or the editor's buffer."""

from __future__ import annotations

import contextlib
import hashlib
import os
from dataclasses import dataclass, replace
from pathlib import Path

from ..host import Editor, FileEdit
from ..text.edit import minimal_changes
from ..workspace.folders import Workspace, decode_text
from ..writes.disk import (
    BOM,
    Changed,
    Refused,
    chmod_confined,
    read_confined,
    replace_confined,
    symlink_confined,
    unlink_confined,
)
from .blobs import BlobStore, digest_of
from .checkpoint_records import CheckpointRecord, FileState
from .edited_texts import NO_MODE, text_bytes, text_seen
from .scan import Seen, entry_of


@dataclass
class Plan:
    path: Path
    uri: str
    target: FileState | None
    expected: FileState | None
    between: bool = False
    """Someone changed it between two steps."""
    current: Seen | None = None
    buffer_text: str | None = None
    version: int | None = None


def same_state(a: FileState | Seen | None, b: FileState | Seen | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    one = a.seen() if isinstance(a, FileState) else a
    return one.same(b.seen() if isinstance(b, FileState) else b)


def plans_of(records: list[CheckpointRecord]) -> dict[Path, Plan]:
    plans: dict[Path, Plan] = {}
    for record in records:
        for file in record.files:
            path = Path(file.path)
            plan = plans.get(path)
            if plan is None:
                plans[path] = Plan(path, file.uri, file.before, file.after)
                continue
            if not same_state(plan.expected, file.before):
                plan.between = True
            plan.expected = file.after
    return plans


def confined_root(ws: Workspace, plan: Plan) -> Path | None:
    """The workspace root the logged path is in (a log is data, not authority)."""
    path = plan.path
    if not path.is_absolute() or ws.uri_for(path) != plan.uri:
        return None
    return ws.root_of(path)


def current_state(plan: Plan, store: BlobStore, cap: int) -> Seen | None:
    """The path now: on disk, or an open buffer's text when the editor holds one."""
    current = entry_of(plan.path, store, cap)
    if plan.buffer_text is None or (current is not None and current.kind == "link"):
        return _named(plan.path, current)
    bom = False
    if current is not None and current.digest is not None:
        bom = store.get(current.digest).startswith(BOM)
    data = text_bytes(plan.buffer_text, bom)
    if current is not None and current.digest == digest_of(data):
        return current
    # Unsaved typing (or an edit not saved yet): its own content.
    return text_seen(data, current.mode if current is not None else NO_MODE, store, cap)


def _named(path: Path, current: Seen | None) -> Seen | None:
    """A file past the size cap, which a scan keeps by its stat alone, named by its digest
    (read, not kept), to compare with an edit's state, which names it so too."""
    if current is None or current.kind != "file" or current.digest is not None:
        return current
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return current
    return replace(current, digest=digest)


def restore_on_disk(plan: Plan, root: Path, data: bytes | None) -> None:
    """Put one path back on disk (its folder's lock held): ``Changed`` when it moved since."""
    target, current, path = plan.target, plan.current, plan.path
    if current is not None and current.kind == "link":
        unlink_confined(root, path)
        current = None
    if target is None:
        if current is not None:
            check_current(root, path, current)
            unlink_confined(root, path)
        return
    if target.kind == "link":
        if current is not None:
            check_current(root, path, current)
            unlink_confined(root, path)
        symlink_confined(root, path, target.target or "")
        return
    assert data is not None
    base = None if current is None else check_current(root, path, current)
    if base != data:
        replace_confined(root, path, data, base)
    chmod_confined(root, path, target.mode)


def check_current(root: Path, path: Path, current: Seen) -> bytes:
    """The file's bytes, when it still is ``current``; ``Changed`` else."""
    data = read_confined(root, path)
    if data is None or digest_of(data) != current.digest:
        raise Changed(f"{path.name} changed during the rewind")
    return data


async def through_editor(plan: Plan, root: Path, data: bytes | None, editor: Editor) -> bool:
    """Put back a file open in the editor through its buffer (as undo does)."""
    assert plan.buffer_text is not None
    if data is None:
        outcome = await editor.delete_file(plan.path, plan.uri, plan.version, root)
        return outcome.applied
    text = decode_text(data)
    if text is None:
        return False
    bom = data.startswith(BOM)
    text = text.removeprefix("\ufeff")
    edit = FileEdit(
        path=plan.path,
        root=root,
        uri=plan.uri,
        base_text=plan.buffer_text,
        version=plan.version,
        create=False,
        changes=minimal_changes(plan.buffer_text, text),
        bom=bom,
        after=text,
    )
    outcome = await editor.apply_edit(edit, f"Tether: rewind {plan.path.name}")
    return outcome.applied


def chmod_if_there(root: Path, path: Path, mode: int) -> None:
    # An editor's buffer not saved yet: the file gets its mode when it is saved.
    with contextlib.suppress(OSError, Refused):
        chmod_confined(root, path, mode)
