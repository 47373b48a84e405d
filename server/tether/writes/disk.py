"""Writing files ourselves: atomically, confined to the workspace, never over a change.

Every file Tether writes goes through here: edits without an editor to apply them
(``apply_on_disk``, the terminal's included), rules files and state (``replace_confined``,
``update_confined``); only the append-only session logs are written elsewhere. Tether's
own files (``private=True``, in an ``own_folder``) are made 0600 in folders made 0700
(``private.py``).

The disk writer walks from the workspace root's directory descriptor one component at a
time with ``O_NOFOLLOW``, so a folder swapped for a symlink after the approval is refused
instead of followed out of the workspace. The new content goes to an anonymous file
(``O_TMPFILE``; invisible, and gone if the process dies) that is then linked in: directly
under the final name for a new file (``linkat`` refuses to overwrite), or under a hidden
temporary name renamed over the old file. Where ``O_TMPFILE`` is missing a named
``.name.XXXX.tether`` file is used instead. New files get ``0o666 & ~umask`` like
``open()``; existing files keep their mode. The current bytes are compared with the
approved base right before the rename (callers hold the path's lock, so no other edit of
ours can come between; another process's write is seen by that comparison).
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

import anyio.to_thread

from tether_protocol import ApproveParams, ApproveResult

from ..host import EditOutcome, FileEdit
from .private import FILE_MODE, FOLDER_MODE, private_folder

BOM = b"\xef\xbb\xbf"
NEW_FILE_MODE = 0o666
"""Asked for when creating a file; the kernel applies the umask."""
TEMP_SUFFIX = ".tether"

AskApproval = Callable[[ApproveParams], Awaitable[ApproveResult | None]]

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK  # a FIFO must not block
_O_TMPFILE: int | None = getattr(os, "O_TMPFILE", None)
_CAN_LINK_FD = os.path.isdir("/proc/self/fd")
"""An anonymous file is linked in through /proc (see ``_link_anonymous``)."""


class Refused(Exception):
    """The path cannot be written safely (a link, outside the workspace); nothing written."""


def has_bom(path: Path) -> bool:
    """The file starts with a UTF-8 byte-order mark."""
    try:
        with path.open("rb") as handle:
            return handle.read(3) == BOM
    except OSError:
        return False


def _umask() -> int:
    # Reading the umask means setting it; /proc has it without that (Linux >= 4.7).
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


# --- walking without following links ----------------------------------------------------


def _parts(root: Path, path: Path) -> tuple[str, ...]:
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        raise Refused(f"{path} is outside the workspace ({root})") from None
    if not parts or any(p in ("", ".", "..") for p in parts):
        raise Refused(f"{path} is not a file path inside the workspace")
    return parts


def _open_dir(name: str, parent: int, shown: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
            try:
                info = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except OSError:
                info = None
            if info is not None and stat.S_ISLNK(info.st_mode):
                raise Refused(f"{shown} is a symbolic link; it is not followed") from None
            raise Refused(f"{shown} is not a folder") from None
        raise


@contextmanager
def _parent_dir(
    root: Path, path: Path, create: bool, folder_mode: int = 0o777
) -> Iterator[tuple[int, str]]:
    """The descriptor of ``path``'s folder, reached from ``root`` without following links,
    and the file's name in it; missing folders are made (``folder_mode``) when ``create``."""
    parts = _parts(root, path)
    fd = os.open(root, _DIR_FLAGS)
    try:
        for index, name in enumerate(parts[:-1]):
            shown = "/".join(parts[: index + 1])
            try:
                child = _open_dir(name, fd, shown)
            except FileNotFoundError:
                if not create:
                    raise
                with suppress(FileExistsError):  # made meanwhile: opened and checked below
                    os.mkdir(name, folder_mode, dir_fd=fd)
                child = _open_dir(name, fd, shown)
            os.close(fd)
            fd = child
        yield fd, parts[-1]
    finally:
        os.close(fd)


def _read_current(name: str, folder: int) -> tuple[bytes, int] | None:
    """The file's bytes and mode, None when it does not exist; ``Refused`` for a link."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=folder)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused(f"{name} is a symbolic link; it is not followed") from None
        raise
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"{name} is not a regular file")
        return handle.read(), stat.S_IMODE(info.st_mode)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.fsync(fd)


def _temp_name(name: str) -> str:
    return f".{name}.{secrets.token_hex(4)}{TEMP_SUFFIX}"


def _anonymous(folder: int, mode: int) -> int | None:
    """An unnamed file in ``folder`` (``O_TMPFILE``), or None where that is not offered."""
    if _O_TMPFILE is None or not _CAN_LINK_FD:
        return None
    try:
        return os.open(".", _O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, mode, dir_fd=folder)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            return None
        raise


def _link_anonymous(fd: int, name: str, folder: int) -> None:
    # linkat(AT_SYMLINK_FOLLOW) of /proc/self/fd/N needs no privilege (AT_EMPTY_PATH does).
    os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=folder, follow_symlinks=True)


def _replace_checked(
    folder: int,
    name: str,
    data: bytes,
    mode: int | None,
    base: bytes | None,
    new_mode: int = NEW_FILE_MODE,
) -> None:
    """Put ``data`` at ``name``: a new file (``base`` None, made with ``new_mode``) or over
    ``base``; ``_Moved`` when the file no longer is what the edit was computed on."""
    anonymous = _anonymous(folder, mode if mode is not None else new_mode)
    temp: str | None = None
    try:
        if anonymous is None:
            temp = _temp_name(name)
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(temp, flags, mode if mode is not None else new_mode, dir_fd=folder)
        else:
            fd = anonymous
        try:
            if mode is not None:
                os.fchmod(fd, mode)  # the umask must not narrow an existing file's mode
            _write_all(fd, data)
            current = _read_current(name, folder)
            if (current[0] if current is not None else None) != base:
                raise _Moved
            if base is None and anonymous is not None:
                _link_anonymous(fd, name, folder)  # EEXIST if it was created meanwhile
                return
            if temp is None:
                temp = _temp_name(name)
                _link_anonymous(fd, temp, folder)
        finally:
            os.close(fd)
        if base is None:
            os.link(temp, name, src_dir_fd=folder, dst_dir_fd=folder, follow_symlinks=False)
            os.unlink(temp, dir_fd=folder)
        else:
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        temp = None
    finally:
        if temp is not None:
            with suppress(OSError):
                os.unlink(temp, dir_fd=folder)


class _Moved(Exception):
    """The file changed since the edit was computed."""


class Changed(Exception):
    """The file no longer holds what the caller read (someone wrote it meanwhile)."""


def read_confined(root: Path, path: Path) -> bytes | None:
    """``path``'s bytes, reached from ``root`` without following a link; None when there is
    no such file. ``Refused`` for a link, a path outside ``root`` or what is not a file."""
    try:
        with _parent_dir(root, path, create=False) as (folder, leaf):
            current = _read_current(leaf, folder)
    except FileNotFoundError:
        return None
    return None if current is None else current[0]


def replace_confined(
    root: Path, path: Path, data: bytes, base: bytes | None, *, private: bool = False
) -> None:
    """Put ``data`` at ``path``, reached from ``root`` without following a link (missing
    folders are made the same way), atomically. ``base`` is what the caller read: None
    for no file. The file is compared with it before and again right before the rename:
    ``Changed`` when it differs, and nothing is written. ``Refused`` for a link or a path
    outside ``root``. An existing file keeps its mode; a new one gets ``0o666 & ~umask``,
    or 0600 (and missing folders 0700) when ``private``: one of Tether's own files.
    """
    folder_mode, new_mode = (FOLDER_MODE, FILE_MODE) if private else (0o777, NEW_FILE_MODE)
    try:
        with _parent_dir(root, path, True, folder_mode) as (folder, leaf):
            current = _read_current(leaf, folder)
            if (current[0] if current is not None else None) != base:
                raise Changed(f"{path.name} changed meanwhile")
            mode = current[1] if current else None
            _replace_checked(folder, leaf, data, mode, base, new_mode)
    except (_Moved, FileExistsError):
        raise Changed(f"{path.name} changed while it was being written") from None


def update_confined(
    root: Path,
    path: Path,
    change: Callable[[bytes | None], bytes | None],
    attempts: int = 3,
    *,
    private: bool = False,
) -> bool:
    """Rewrite ``path`` (from ``root``, no link followed) as ``change(what it holds)``, or
    leave it when that is None; read and changed again when another writer came in
    between. True when written; ``Changed`` after ``attempts`` tries. ``private``: one of
    Tether's own files (see ``replace_confined``)."""
    for attempt in range(1, attempts + 1):
        base = read_confined(root, path)
        new = change(base)
        if new is None:
            return False
        try:
            replace_confined(root, path, new, base, private=private)
        except Changed:
            if attempt == attempts:
                raise
            continue
        return True
    return False


def make_parents(root: Path, path: Path) -> None:
    """Make ``path``'s missing folders under ``root`` without following a link;
    ``Refused`` when one is a link or not a folder."""
    with _parent_dir(root, path, create=True):
        pass


def unlink_confined(root: Path, path: Path) -> bool:
    """Remove the file or link at ``path`` (a link itself, never what it points to),
    reached from ``root`` without following a link; False when nothing was there.
    ``Refused`` for a folder, a link on the way or a path outside ``root``."""
    try:
        with _parent_dir(root, path, create=False) as (folder, leaf):
            info = os.stat(leaf, dir_fd=folder, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                raise Refused(f"{path.name} is a folder")
            os.unlink(leaf, dir_fd=folder)
    except FileNotFoundError:
        return False
    return True


def symlink_confined(root: Path, path: Path, target: str) -> None:
    """Make ``path`` a link to ``target`` (written as given, never followed), reached from
    ``root`` without following a link (missing folders made); ``FileExistsError`` when
    something is there."""
    with _parent_dir(root, path, create=True) as (folder, leaf):
        os.symlink(target, leaf, dir_fd=folder)


def chmod_confined(root: Path, path: Path, mode: int) -> None:
    """Set the permission bits of the file at ``path``, reached from ``root`` without
    following a link; ``Refused`` when it is a link or not a file."""
    with _parent_dir(root, path, create=False) as (folder, leaf):
        fd = os.open(leaf, _READ_FLAGS, dir_fd=folder)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise Refused(f"{path.name} is not a regular file")
            os.fchmod(fd, mode)
        finally:
            os.close(fd)


def own_folder(folder: Path, *, narrowed: bool = True) -> Path:
    """One of Tether's own folders (config, state), made if missing and resolved: links
    the user made to it are followed once, here; below it nothing is followed. It is the
    user's alone (``private.private_folder``; ``narrowed``: see there): write in it with
    ``private=True``."""
    return private_folder(folder, narrowed=narrowed).resolve()


def _apply_on_disk(edit: FileEdit) -> EditOutcome:
    name = edit.path.name
    data = (BOM if edit.bom else b"") + edit.new_text.encode("utf-8")
    try:
        with _parent_dir(edit.root, edit.path, create=edit.create) as (folder, leaf):
            current = _read_current(leaf, folder)
            if edit.create:
                if current is not None:
                    return EditOutcome(False, f"{name} was created by someone else meanwhile", True)
                _replace_checked(folder, leaf, data, None, None)
                return EditOutcome(True)
            if current is None:
                return EditOutcome(False, f"{name} was deleted since it was read", True)
            raw, mode = current
            try:
                text = raw.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                return EditOutcome(False, f"cannot read {name}: {exc}")
            if text != edit.base_text:
                return EditOutcome(False, f"{name} changed on disk since it was read", True)
            _replace_checked(folder, leaf, data, mode, raw)
    except Refused as exc:
        return EditOutcome(False, f"refused to write {name}: {exc}; nothing was written")
    except _Moved:
        return EditOutcome(False, f"{name} changed on disk while it was being written", True)
    except FileExistsError:
        return EditOutcome(False, f"{name} was created by someone else meanwhile", True)
    except OSError as exc:
        return EditOutcome(False, f"cannot write {name}: {exc.strerror or exc}")
    return EditOutcome(True)


async def apply_on_disk(edit: FileEdit) -> EditOutcome:
    """Apply an edit to the file on disk, refusing when the disk no longer has the base or
    the path now leads through a link or out of the workspace (``edit.root``)."""
    return await anyio.to_thread.run_sync(_apply_on_disk, edit)


def _delete(path: Path, root: Path | None) -> EditOutcome:
    try:
        # Without a root the walk starts at "/": no component may be a link either.
        with _parent_dir(root or Path(path.anchor), path, create=False) as (folder, leaf):
            if _read_current(leaf, folder) is None:
                raise FileNotFoundError(errno.ENOENT, "no such file")
            os.unlink(leaf, dir_fd=folder)
    except Refused as exc:
        return EditOutcome(False, f"refused to delete {path.name}: {exc}")
    except OSError as exc:
        return EditOutcome(False, f"cannot delete {path.name}: {exc.strerror or exc}")
    return EditOutcome(True)


def remove_confined(root: Path, path: Path) -> bool:
    """Delete ``path``, reached from ``root`` without following a link; True when it went
    (False: it was not there, or could not be removed)."""
    return _delete(path, root).applied


async def delete_on_disk(path: Path, root: Path | None = None) -> EditOutcome:
    """Delete a file from disk, reaching it without following links (from ``root``, the
    workspace root, when given)."""
    return await anyio.to_thread.run_sync(_delete, path, root)


class DiskEditor:
    """An ``Editor`` with no editor: edits go to disk, approvals to a callback."""

    def __init__(self, ask: AskApproval | None = None) -> None:
        self._ask = ask

    async def ask_approval(
        self, request: ApproveParams, change: FileEdit | None = None
    ) -> ApproveResult | None:
        return None if self._ask is None else await self._ask(request)

    async def apply_edit(self, edit: FileEdit, label: str) -> EditOutcome:
        return await apply_on_disk(edit)

    async def save_documents(self, paths: Sequence[Path]) -> Sequence[Path]:
        return ()

    async def delete_file(
        self, path: Path, uri: str, version: int | None, root: Path
    ) -> EditOutcome:
        return await delete_on_disk(path, root)

    def unsaved_edits(self) -> Sequence[Path]:
        return ()
