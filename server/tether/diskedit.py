"""Writing files ourselves: atomically, keeping permissions and a BOM, never over a change."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import anyio.to_thread

from .host import ApprovalAnswer, ApprovalRequest, EditOutcome, FileEdit

BOM = b"\xef\xbb\xbf"

AskApproval = Callable[[ApprovalRequest], Awaitable[ApprovalAnswer | None]]


def has_bom(path: Path) -> bool:
    """The file starts with a UTF-8 byte-order mark."""
    try:
        with path.open("rb") as handle:
            return handle.read(3) == BOM
    except OSError:
        return False


def write_text_atomic(path: Path, text: str, bom: bool = False) -> None:
    """Write via a temporary file in the same folder and a rename; permissions kept."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    data = (BOM if bom else b"") + text.encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tether", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _apply_on_disk(edit: FileEdit) -> EditOutcome:
    exists = edit.path.exists()
    if edit.create and exists:
        return EditOutcome(False, f"{edit.path.name} was created by someone else meanwhile", True)
    if not edit.create:
        try:
            current = edit.path.read_bytes().decode("utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            return EditOutcome(False, f"cannot read {edit.path.name}: {exc}")
        if current != edit.base_text:
            return EditOutcome(False, f"{edit.path.name} changed on disk since it was read", True)
    try:
        write_text_atomic(edit.path, edit.new_text, edit.bom)
    except OSError as exc:
        return EditOutcome(False, f"cannot write {edit.path.name}: {exc.strerror or exc}")
    return EditOutcome(True)


async def apply_on_disk(edit: FileEdit) -> EditOutcome:
    """Apply an edit to the file on disk, refusing when the disk no longer has the base."""
    return await anyio.to_thread.run_sync(_apply_on_disk, edit)


def _delete(path: Path) -> EditOutcome:
    try:
        path.unlink()
    except OSError as exc:
        return EditOutcome(False, f"cannot delete {path.name}: {exc.strerror or exc}")
    return EditOutcome(True)


async def delete_on_disk(path: Path) -> EditOutcome:
    """Delete a file from disk."""
    return await anyio.to_thread.run_sync(_delete, path)


class DiskEditor:
    """An ``Editor`` with no editor: edits go to disk, approvals to a callback."""

    def __init__(self, ask: AskApproval | None = None) -> None:
        self._ask = ask

    async def ask_approval(self, request: ApprovalRequest) -> ApprovalAnswer | None:
        return None if self._ask is None else await self._ask(request)

    async def apply_edit(self, edit: FileEdit, label: str) -> EditOutcome:
        return await apply_on_disk(edit)

    async def save_documents(self, paths: Sequence[Path]) -> Sequence[Path]:
        return ()

    async def delete_file(self, path: Path, uri: str, version: int | None) -> EditOutcome:
        return await delete_on_disk(path)

    def unsaved_edits(self) -> Sequence[Path]:
        return ()
