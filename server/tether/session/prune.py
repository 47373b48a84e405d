"""Keeping the checkpoint store under its size limit: the oldest sessions' checkpoints go
first.

When the blobs take more than the limit, the sessions are taken newest first (by their
log's last change) and the contents their checkpoints name are kept while they fit; so are
the contents every workspace's kept scan names (what the files hold now, the next step's
"before"), and anything stored or used in the last hour (a step in flight in another
process). The rest is deleted. A rewind to a pruned checkpoint then says the store lacks
what it needs, and restores nothing. Blocking: run it in a worker thread.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
from pathlib import Path

from .blobs import BlobStore

log = logging.getLogger(__name__)

GRACE_SECONDS = 3600.0
"""Blobs stored or used this recently are never pruned."""
_DIGEST = re.compile(rb'"sha256":"([0-9a-f]{64})"')
_SCAN_DIGEST = re.compile(rb'"([0-9a-f]{64})"')


def _blobs(store: BlobStore) -> dict[str, tuple[int, float]]:
    """Every blob: its size and last modification."""
    found: dict[str, tuple[int, float]] = {}
    try:
        folders = list(os.scandir(store.blobs))
    except OSError:
        return found
    for folder in folders:
        if len(folder.name) != 2 or not folder.is_dir(follow_symlinks=False):
            continue
        try:
            with os.scandir(folder.path) as entries:
                for entry in entries:
                    if entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
                        continue
                    info = entry.stat(follow_symlinks=False)
                    found[folder.name + entry.name] = (info.st_size, info.st_mtime)
        except OSError:
            continue
    return found


def _named_in(path: Path, pattern: re.Pattern[bytes], marker: bytes | None) -> set[str]:
    """The digests a log (its checkpoint lines) or a kept scan names."""
    names: set[str] = set()
    try:
        with path.open("rb") as handle:
            for line in handle:
                if marker is None or marker in line:
                    names.update(m.decode() for m in pattern.findall(line))
    except OSError:
        pass
    return names


def prune(state_dir: Path, limit: int, now: float | None = None) -> int:
    """Delete what the oldest sessions' checkpoints alone need until the store fits in
    ``limit`` bytes; the bytes freed."""
    store = BlobStore(state_dir)
    blobs = _blobs(store)
    total = sum(size for size, _ in blobs.values())
    if total <= limit:
        return 0
    moment = time.time() if now is None else now
    keep = {d for d, (_, modified) in blobs.items() if moment - modified < GRACE_SECONDS}
    for scan in (store.root / "scans").glob("*.jsonl"):
        keep |= _named_in(scan, _SCAN_DIGEST, None)
    used = sum(blobs[d][0] for d in keep if d in blobs)
    logs = sorted(
        (state_dir / "sessions").glob("*.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True
    )
    for session in logs:
        named = _named_in(session, _DIGEST, b'"record":"checkpoint"') - keep
        size = sum(blobs[d][0] for d in named if d in blobs)
        if used + size > limit:
            break  # this session and every older one lose what only they name
        keep |= named
        used += size
    freed = 0
    for digest, (size, _) in blobs.items():
        if digest in keep:
            continue
        try:
            os.unlink(store.path(digest))
            freed += size
        except OSError:
            continue
    if freed:
        log.info("checkpoint store pruned: %d bytes freed (limit %d)", freed, limit)
    return freed


PRUNE_EVERY_SECONDS = 3600.0
"""A process looks at the store's size at most this often (the first time after a step)."""
_last_pruned: dict[Path, float] = {}
_lock = threading.Lock()


def maybe_prune(state_dir: Path, limit: int) -> None:
    """Prune the store in the background unless this process did within the hour."""
    moment = time.monotonic()
    with _lock:
        last = _last_pruned.get(state_dir)
        if last is not None and moment - last < PRUNE_EVERY_SECONDS:
            return
        _last_pruned[state_dir] = moment

    def work() -> None:
        try:
            prune(state_dir, limit)
        except Exception:  # never a step's failure: the store is only larger
            log.exception("pruning the checkpoint store failed")

    threading.Thread(target=work, name="tether-checkpoint-prune", daemon=True).start()
