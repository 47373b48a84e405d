"""One session, one running process: a lock per session, held while a process has the
session open for prompting.

Two processes continuing one session would each append to its log from their own memory of
the conversation, and each one's next turn would miss the other's. So a process takes the
session's lock (``fcntl.flock`` on ``<id>.lock`` next to the log) before it reads the log
to continue it, or starts a new one, and keeps it while the session is open there (in a
server's memory of recent sessions; an ACP connection's session until the connection ends).
Another process asking for it is refused with ``SessionBusy``, which names the holder; it
has read the log at most, and written nothing. The kernel lets go of the lock when its
process ends, however it ends: a crash leaves no stale lock behind.

Within one process the lock is shared: fronts and managers of one process over the same
state folder count their claims on one lock (the run manager already keeps two runs of one
session apart). A state folder that cannot be written cannot hold a lock either: the
session goes on without one (its log cannot be written anyway; the writer says so).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..writes.private import make_folders, open_private
from .index import session_log_path

log = logging.getLogger(__name__)


class SessionBusy(Exception):
    """The session is open in another process; the message says so in the user's words."""


def lock_path(state_dir: Path, session_id: str) -> Path:
    """The lock file of a session (next to its log)."""
    log_path = session_log_path(state_dir, session_id)
    return log_path.with_name(log_path.stem + ".lock")


@dataclass(slots=True)
class _Held:
    fd: int
    claims: int


_held: dict[Path, _Held] = {}
"""This process's session locks, by lock file, with how many claims share each."""
_guard = threading.Lock()


def _holder(fd: int) -> str:
    """Who holds the lock, as its holder wrote it (a process id)."""
    with contextlib.suppress(OSError, ValueError):
        pid = int(os.pread(fd, 32, 0).split()[0])
        return f" (pid {pid})"
    return ""


def _take(path: Path, session_id: str) -> int | None:
    """The lock file opened and locked; None when it cannot be made (an unwritable state
    folder); ``SessionBusy`` when another process holds it."""
    try:
        make_folders(path.parent)
        fd = open_private(path, os.O_RDWR)
    except OSError as exc:
        log.debug("no lock for session %s: %s", session_id, exc)
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise SessionBusy(
            f"session {session_id!r} is open in another Tether process{holder}: close it "
            "there first"
        ) from None
    except OSError as exc:  # a file system without locks
        log.debug("no lock for session %s: %s", session_id, exc)
        os.close(fd)
        return None
    with contextlib.suppress(OSError):
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


class SessionLocks:
    """The sessions a front (or run manager) of this process has open, in one state folder.

    ``claim`` and ``release`` count: a session claimed twice is released on the second
    ``release``. ``release_all`` lets go of every claim of this object (its owner closed).
    Blocking (a file is opened): call ``claim`` off the event loop unless ``holds``.
    """

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self._claims: Counter[str] = Counter()

    def holds(self, session_id: str) -> bool:
        """Whether this object has claimed the session."""
        return self._claims[session_id] > 0

    def claim(self, session_id: str) -> None:
        """Open the session for prompting here: ``SessionBusy`` when another process has
        it open."""
        path = lock_path(self.state_dir, session_id)
        with _guard:
            held = _held.get(path)
            if held is None:
                fd = _take(path, session_id)
                if fd is not None:
                    _held[path] = _Held(fd, 0)
                    held = _held[path]
            if held is not None:
                held.claims += 1
            self._claims[session_id] += 1

    def release(self, session_id: str) -> None:
        """One claim of the session given back; the lock goes with the last one."""
        if self._claims[session_id] <= 0:
            return
        self._claims[session_id] -= 1
        if not self._claims[session_id]:
            del self._claims[session_id]
        path = lock_path(self.state_dir, session_id)
        with _guard:
            held = _held.get(path)
            if held is None:
                return
            held.claims -= 1
            if held.claims <= 0:
                del _held[path]
                os.close(held.fd)  # unlocks

    def release_all(self) -> None:
        """Every claim of this object given back."""
        for session_id, count in list(self._claims.items()):
            for _ in range(count):
                self.release(session_id)
