"""The checkpoint store: file contents kept by their sha256, once, under the state folder.

``<state>/checkpoints/blobs/ab/cdef…`` holds the bytes whose sha256 is ``abcdef…``: the
same content seen by any step of any session is stored once. Folders are made 0700 and
files 0600 from creation (``writes/private.py``); a blob is written to a fresh temporary
name and linked into place, so concurrent sessions storing the same content never see a
half-written file, and one already there is kept. It is never inside the workspace and
never touches git.

A blob is checked against its name every time it is read: one changed, replaced by a link
or missing (someone edited the store, a disk went bad) is ``StoreDamaged``, and a rewind
that needs it restores nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import stat
import uuid
from pathlib import Path

from ..writes.private import make_folders, narrow, open_private

STORE = "checkpoints"
"""The store's folder in the state folder."""

_DIGEST = re.compile(r"[0-9a-f]{64}")
_READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW


class StoreDamaged(Exception):
    """A blob a checkpoint needs is missing, is not what was stored, or is not a plain file
    of the user's: the message names it."""


def digest_of(data: bytes) -> str:
    """The name ``data`` is stored under."""
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    """The content-addressed files of ``<state_dir>/checkpoints``; safe to share between
    threads and processes (every write is a new file linked into place)."""

    def __init__(self, state_dir: Path) -> None:
        self.root = state_dir / STORE
        self.blobs = self.root / "blobs"
        self._made: set[str] = set()
        """Fan-out folders known to exist (made by this process or found)."""

    def _folder(self, digest: str) -> Path:
        folder = self.blobs / digest[:2]
        if digest[:2] not in self._made:
            if not self.blobs.is_dir():
                make_folders(self.blobs)
                narrow(self.root)
            make_folders(folder)
            self._made.add(digest[:2])
        return folder

    def path(self, digest: str) -> Path:
        """Where the blob ``digest`` is (or would be) kept."""
        if not _DIGEST.fullmatch(digest):
            raise StoreDamaged(f"the checkpoint store names a blob {digest[:80]!r}: not a sha256")
        return self.blobs / digest[:2] / digest[2:]

    def put(self, data: bytes, digest: str | None = None) -> str:
        """Store ``data`` (once: content already there is kept); its digest. ``OSError``
        when the state folder cannot be written."""
        digest = digest or digest_of(data)
        target = self._folder(digest) / digest[2:]
        if not self.reuse(digest):
            temp = target.with_name(f".{digest[2:10]}.{uuid.uuid4().hex[:12]}.tmp")
            fd = open_private(temp, os.O_WRONLY | os.O_EXCL)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                with contextlib.suppress(FileExistsError):  # stored meanwhile: the same bytes
                    os.link(temp, target, follow_symlinks=False)
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
        return digest

    def reuse(self, digest: str) -> bool:
        """Whether the blob is there, marked used again if so: not pruned for a while
        (``prune.py``)."""
        target = self.path(digest)
        if not os.path.lexists(target):
            return False
        with contextlib.suppress(OSError):
            os.utime(target, follow_symlinks=False)
        return True

    def has(self, digest: str) -> bool:
        """Whether the blob is there (not checked: ``get`` checks it)."""
        return os.path.isfile(self.path(digest))

    def get(self, digest: str) -> bytes:
        """The stored bytes of ``digest``, checked; ``StoreDamaged`` naming what is wrong."""
        path = self.path(digest)
        try:
            fd = os.open(path, _READ_FLAGS)
        except FileNotFoundError:
            raise StoreDamaged(
                f"the checkpoint store lacks blob {digest[:12]}… (pruned to keep the store "
                "under checkpointStoreMaxBytes, or removed)"
            ) from None
        except OSError as exc:
            raise StoreDamaged(
                f"the checkpoint store's blob {digest[:12]}… cannot be read: "
                f"{exc.strerror or exc} (a link or a folder where a file should be)"
            ) from None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
                raise StoreDamaged(
                    f"the checkpoint store's blob {digest[:12]}… is not a file of yours"
                )
            data = handle.read()
        if digest_of(data) != digest:
            raise StoreDamaged(
                f"the checkpoint store was changed: blob {digest[:12]}… no longer holds what "
                "was stored"
            )
        return data
