"""Which folders of a workspace changed since a scan, as Linux's inotify tells it, so that
the scan before a step lists again only those (``scan.py``).

One inotify descriptor per workspace scanner, kept by the process, one watch per folder a
full scan walked (ctypes over libc; no dependency). A watch reports its folder's entries
being written, their attributes changed, created, deleted or renamed; what it cannot tell
— a folder made, removed, renamed or its permissions changed inside the workspace (a new
subtree has no watches), an ignore file changed, the kernel's queue overflowing, a watched
folder gone — makes the next scan a full one. The kernel queues an event within the call
that made the change, so a change a process finished is in the queue when the scan reads
it.

Not seen by inotify: writes through a memory map, writes through a hard link from
outside the workspace, changes made by another machine on a network filesystem. A
workspace on a filesystem that is not known to be local is therefore not watched (every
scan is full), and the scan after a step always walks everything: what was missed
between two steps is caught there, in the next step's change set.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import logging
import os
import struct
import sys
from pathlib import Path

log = logging.getLogger(__name__)

IN_MODIFY = 0x00000002
IN_ATTRIB = 0x00000004
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_MOVE_SELF = 0x00000800
IN_UNMOUNT = 0x00002000
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
IN_ONLYDIR = 0x01000000
IN_DONT_FOLLOW = 0x02000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
    | IN_DONT_FOLLOW
)
_STRUCTURE = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO
_GONE = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED | IN_Q_OVERFLOW
_HEADER = struct.Struct("iIII")

MAX_WATCHES = 8192
"""Folders one workspace may watch, and never more than an eighth of the user's inotify
watch limit (shared with every program they run, editors first); a workspace with more
folders is scanned in full each time."""


def _watch_budget() -> int:
    try:
        limit = int(Path("/proc/sys/fs/inotify/max_user_watches").read_text())
    except (OSError, ValueError):
        return 0
    return min(MAX_WATCHES, limit // 8)


LOCAL_FILESYSTEMS = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "zfs", "overlay", "jfs"}
    | {"reiserfs", "bcachefs", "ramfs", "hfsplus", "apfs", "nilfs2"}
)
"""Where every change is made by this machine's kernel, so inotify sees it."""


class Dirty:
    """What changed since the last drain: ``folders`` that need listing again, or
    ``everything`` (a full scan)."""

    __slots__ = ("everything", "folders")

    def __init__(self) -> None:
        self.everything = False
        self.folders: set[str] = set()


_libc: ctypes.CDLL | None = None


def _load() -> ctypes.CDLL | None:
    global _libc
    if _libc is None and sys.platform.startswith("linux"):
        try:  # the process's own symbols (libc's among them): nothing searched or run
            libc = ctypes.CDLL(None, use_errno=True)
            libc.inotify_init1.argtypes = [ctypes.c_int]
            libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
            _libc = libc
        except (OSError, AttributeError):
            return None
    return _libc


def _mounts() -> list[tuple[str, str]]:
    """Each mount point with its filesystem type (``/proc/self/mountinfo``)."""
    found: list[tuple[str, str]] = []
    try:
        text = Path("/proc/self/mountinfo").read_text()
    except OSError:
        return found
    for line in text.splitlines():
        left, _, right = line.partition(" - ")
        fields, kinds = left.split(), right.split()
        if len(fields) >= 5 and kinds:
            point = fields[4].encode().decode("unicode_escape")  # \040 for a space
            found.append((point, kinds[0]))
    return found


def local_only(roots: tuple[Path, ...], mounts: list[tuple[str, str]] | None = None) -> bool:
    """Whether every root, and every filesystem mounted inside one, is known local."""
    mounts = _mounts() if mounts is None else mounts
    if not mounts:
        return False
    for root in roots:
        top = str(root)
        holder = max(
            (m for m in mounts if top == m[0] or top.startswith(m[0].rstrip("/") + "/")),
            key=lambda m: len(m[0]),
            default=None,
        )
        if holder is None or holder[1] not in LOCAL_FILESYSTEMS:
            return False
        for point, kind in mounts:
            if point.startswith(top + "/") and kind not in LOCAL_FILESYSTEMS:
                return False
    return True


class FolderWatch:
    """An inotify descriptor watching folders; ``open`` gives None where there is none
    (not Linux, a non-local filesystem, no descriptor left)."""

    def __init__(self, fd: int, libc: ctypes.CDLL) -> None:
        self._fd = fd
        self._libc = libc
        self._budget = _watch_budget()
        self._folders: dict[int, str] = {}
        self.broken = False
        """A watch could not be added, or the descriptor failed: only full scans now."""

    @classmethod
    def open(cls) -> FolderWatch | None:
        """A new descriptor with no watch."""
        libc = _load()
        if libc is None:
            return None
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            log.info("no inotify for the workspace scan: %s", os.strerror(ctypes.get_errno()))
            return None
        return cls(fd, libc)

    def __del__(self) -> None:
        self.close()

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.broken = True

    def begin(self) -> None:
        """A full scan starts: what is queued is forgotten (the scan lists every folder
        after this), and the folders are named again as the scan adds them (a folder
        moved since is known by its new name; one no longer listed is not reported)."""
        self.drain()
        self._folders = {}

    def add(self, folder: str) -> bool:
        """Watch ``folder`` (before it is listed); False when it cannot be (then the
        watch is broken: every later scan is full)."""
        if self.broken:
            return False
        if len(self._folders) >= self._budget:
            self._give_up(f"more than {self._budget:,} folders")
            return False
        try:
            name = os.fsencode(folder)
        except UnicodeError:
            self._give_up("a folder's name cannot be encoded")
            return False
        wd = self._libc.inotify_add_watch(self._fd, name, MASK)  # same wd when watched
        if wd < 0:
            code = ctypes.get_errno()
            if code in (errno.ENOENT, errno.ENOTDIR, errno.EACCES):
                return True  # gone, or not readable: the scan skips it too
            self._give_up(os.strerror(code))  # ENOSPC: the user's watch limit
            return False
        self._folders[wd] = folder
        return True

    def _give_up(self, why: str) -> None:
        log.info("the workspace scan stops watching folders (%s): every scan is full", why)
        self.close()

    def drain(self, ignore_names: tuple[str, ...] = ()) -> Dirty:
        """What changed since the last drain (events read from the kernel's queue)."""
        dirty = Dirty()
        if self.broken:
            dirty.everything = True
            return dirty
        folders = self._folders
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return dirty
            except OSError:
                self.close()
                dirty.everything = True
                return dirty
            at = 0
            while at + _HEADER.size <= len(data):
                wd, mask, _, size = _HEADER.unpack_from(data, at)
                name = data[at + _HEADER.size : at + _HEADER.size + size].rstrip(b"\0")
                at += _HEADER.size + size
                folder = folders.get(wd)
                if mask & IN_Q_OVERFLOW:
                    dirty.everything = True
                if folder is None:
                    continue  # a folder the last full scan did not list
                if mask & _GONE or (mask & IN_ISDIR and mask & (_STRUCTURE | IN_ATTRIB)):
                    dirty.everything = True
                    continue
                if name and os.fsdecode(name) in ignore_names:
                    dirty.everything = True
                dirty.folders.add(folder)
