"""An edited file's text as a checkpoint keeps it, before and after the edit.

A text is kept as the bytes a file holds (UTF-8, its BOM if it had one): stored in the
blob store, or past the size cap only named by its sha256. The session log names the
same texts by the same sha256 (``records.text_hash``, for undo), remembering the last
ones and hashing an edit's text after on from its text before's: a checkpoint asks it
(``records.text_digest``), so a 10 MB text is hashed once for both, not encoded and hashed
again before and after every edit (~16 ms each). Its bytes are made only to be stored: not
for a text past the cap, nor one the store already has.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from ..writes.disk import BOM
from .blobs import BlobStore, digest_of
from .records import text_digest
from .scan import Seen

NO_MODE = 0o644
"""An edited file's mode when it is not on disk (an editor's buffer not saved yet)."""


def text_bytes(text: str, bom: bool) -> bytes:
    """A text as a file holds it (the writer's encoding)."""
    return (BOM if bom else b"") + text.encode("utf-8", "surrogatepass")


def text_seen(data: bytes, mode: int, store: BlobStore, cap: int) -> Seen:
    """A text's bytes as a checkpoint keeps them: stored, or past the size cap only named
    by their digest (compared at a rewind, never restored), as a scan keeps such a file."""
    return _kept(digest_of(data), len(data), lambda: data, mode, store, cap)


def text_state(path: Path, text: str, bom: bool, store: BlobStore, cap: int) -> Seen:
    """The state of the edited file ``path`` holding ``text`` (before or after an edit)."""
    try:
        info = os.lstat(path)
        mode = stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else NO_MODE
    except OSError:
        mode = NO_MODE
    if bom:  # rare: its digest is not the log's
        return text_seen(text_bytes(text, bom), mode, store, cap)
    digest, size = text_digest(text)
    return _kept(digest, size, lambda: text_bytes(text, False), mode, store, cap)


def _kept(
    digest: str, size: int, data: Callable[[], bytes], mode: int, store: BlobStore, cap: int
) -> Seen:
    """The bytes named ``digest``, ``size`` long: past the cap only named; else stored,
    made by ``data`` only when the store does not have them yet."""
    if size > cap:
        why = f"larger than the {cap:,}-byte cap"
        return Seen("file", mode, size, 0, 0, 0, digest, why=why)
    if not store.reuse(digest):
        store.put(data(), digest)
    return Seen("file", mode, size, 0, 0, 0, digest)
