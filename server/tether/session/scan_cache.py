"""A workspace's last scan, kept in the checkpoint store so that a new process (each
``tether run``, a restarted server) does not read every file again on its first ``bash``
step: ``<state>/checkpoints/scans/<key>.jsonl``, one entry a line, the user's alone (0600
in 0700 folders), replaced atomically.

It is a cache, not a record: a file whose stat (size, times, inode) is as cached is taken
to hold the cached content, whose blob must still be in the store; anything unreadable,
of another shape, outside the workspace or naming a missing blob is dropped, and the file
read again. Written by one thread at a time, a slice at a time (the event loop goes on).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

from ..writes.private import make_folders, open_private
from .blobs import BlobStore
from .scan import Seen

log = logging.getLogger(__name__)

VERSION = 1
SLICE = 2000
"""Entries written between two pauses that let other threads (the event loop) run."""
MAX_BYTES = 256 << 20


def cache_path(store: BlobStore, roots: tuple[Path, ...], cap: int) -> Path:
    """Where the last scan of ``roots`` (with size cap ``cap``) is kept."""
    key = hashlib.sha256("\0".join([*map(str, roots), str(cap)]).encode()).hexdigest()
    return store.root / "scans" / f"{key[:32]}.jsonl"


def load_scan(path: Path, roots: tuple[Path, ...], store: BlobStore) -> dict[str, Seen]:
    """The entries kept at ``path`` that still hold (empty when there are none)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return {}
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if info.st_uid != os.geteuid() or info.st_mode & 0o022 or info.st_size > MAX_BYTES:
            return {}  # not the user's alone (or absurd): not trusted
        lines = handle.read().split(b"\n")
    try:
        header = json.loads(lines[0])
        if header != {"version": VERSION, "roots": [str(r) for r in roots]}:
            return {}
    except ValueError:
        return {}
    prefixes = tuple(f"{root}/" for root in roots)
    found: dict[str, Seen] = {}
    present: dict[str, bool] = {}
    for line in lines[1:]:
        if not line:
            continue
        try:
            path_, kind, mode, size, mtime, ctime, ino, digest, target, why = json.loads(line)
            seen = Seen(kind, mode, size, mtime, ctime, ino, digest, target, why)
            if not isinstance(path_, str) or not path_.startswith(prefixes):
                continue
            if kind not in ("file", "link") or not all(
                isinstance(n, int) for n in (mode, size, mtime, ctime, ino)
            ):
                continue
        except (ValueError, TypeError):
            continue
        if digest is not None:
            if digest not in present:
                try:
                    present[digest] = os.path.isfile(store.path(digest))
                except Exception:  # a name that is no sha256: StoreDamaged
                    present[digest] = False
            if not present[digest]:
                continue
        found[path_] = seen
    return found


def save_scan(path: Path, roots: tuple[Path, ...], entries: Mapping[str, Seen]) -> None:
    """Keep ``entries`` at ``path`` (replacing what was there); ``OSError`` when the store
    cannot be written."""
    make_folders(path.parent)
    temp = path.with_name(f".{path.stem}.{uuid.uuid4().hex[:12]}.tmp")
    fd = open_private(temp, os.O_WRONLY | os.O_EXCL)
    try:
        with os.fdopen(fd, "wb") as handle:
            header = {"version": VERSION, "roots": [str(r) for r in roots]}
            handle.write(json.dumps(header).encode() + b"\n")
            batch: list[bytes] = []
            for at, (name, s) in enumerate(entries.items(), 1):
                row = [name, s.kind, s.mode, s.size, s.mtime_ns, s.ctime_ns, s.ino]
                row += [s.digest, s.target, s.why]
                batch.append(json.dumps(row).encode())  # ASCII: a name's lone surrogate too
                if at % SLICE == 0:
                    handle.write(b"\n".join(batch) + b"\n")
                    batch.clear()
                    time.sleep(0)  # let a waiting thread (the event loop) run
            if batch:
                handle.write(b"\n".join(batch) + b"\n")
        os.replace(temp, path)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)
