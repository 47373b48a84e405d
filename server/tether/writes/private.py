"""Tether's own files are the user's alone: folders 0700 and files 0600 from the moment
they are made, whatever the umask.

What Tether keeps — session logs and their indexes (every file the model read, secrets
included), the terminal's history, approval previews, the user's rules — is made here with
its mode, never made first and narrowed after (another user could open it in between). A
folder of Tether's own (the state folder, the config folder) that already lets others in is
narrowed once, with one log line; files already there keep their mode (the folder keeps
others out). Folders above Tether's own that are missing (``~/.local/state``) are made 0700
too; existing ones are left as they are.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path
from typing import IO

log = logging.getLogger(__name__)

FOLDER_MODE = 0o700
FILE_MODE = 0o600

_FILE_FLAGS = os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW


def make_folders(folder: Path) -> None:
    """Make ``folder`` and the folders missing above it, each 0700 (an existing one is left
    as it is). ``OSError`` when one cannot be made."""
    missing: list[Path] = []
    level = folder
    while not os.path.lexists(level) and level != level.parent:
        missing.append(level)
        level = level.parent
    for made in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another process
            os.mkdir(made, FOLDER_MODE)


def private_folder(folder: Path, *, narrowed: bool = True) -> Path:
    """``folder``, one of Tether's own: made if missing (0700, as are the missing folders
    above it), and narrowed to the user alone when it is theirs and lets others in (unless
    not ``narrowed``: a folder the user chose, such as where their link leads)."""
    make_folders(folder)
    if narrowed:
        narrow(folder)
    return folder


def narrow(folder: Path) -> None:
    """Take group and others' rights away from ``folder`` when it is the user's and has
    any (one log line); a folder of someone else's is left alone."""
    try:
        info = os.stat(folder)
    except OSError:
        return
    mode = stat.S_IMODE(info.st_mode)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or not mode & 0o077:
        return
    narrowed = mode & ~0o077
    try:
        os.chmod(folder, narrowed)
    except OSError as exc:
        log.warning("%s lets other users in (mode %o); not narrowed: %s", folder, mode, exc)
        return
    log.warning("%s let other users in (mode %o); now %o: the user's alone", folder, mode, narrowed)


def open_private(path: Path, flags: int) -> int:
    """A descriptor of ``path`` opened with ``flags``, made 0600 when it is created (a link
    is not followed)."""
    return os.open(path, flags | _FILE_FLAGS, FILE_MODE)


def append_private(path: Path) -> IO[bytes]:
    """``path`` opened to read and append (``a+b``), made 0600 when it is created."""
    return os.fdopen(open_private(path, os.O_RDWR | os.O_APPEND), "a+b")


def touch_private(path: Path) -> None:
    """Make ``path`` an empty file of mode 0600 unless it exists (its folder must)."""
    os.close(open_private(path, os.O_WRONLY | os.O_APPEND))


def write_new_private(path: Path, data: bytes) -> None:
    """Write ``data`` to a new file ``path`` (0600); ``FileExistsError`` if it exists."""
    fd = open_private(path, os.O_WRONLY | os.O_EXCL)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
