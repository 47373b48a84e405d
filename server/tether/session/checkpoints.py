"""A checkpoint around every step that can change files, kept in the session's log.

Before an edit (``edit_file``, ``write_file``) the file itself is kept; before a ``bash``
command or an MCP tool not known to be read-only, the whole workspace is scanned
(``scan.py``: by stat, reading only what changed since the last scan). After the step, its
change set — each file modified, created, deleted, its mode changed, a link made — with
the state before and after goes to the log as a ``checkpoint`` record; the contents are in
the store (``blobs.py``). A checkpoint never stops a step: one that cannot be taken (the
store cannot be written, too many files) is logged as incomplete, with why.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import anyio.to_thread

from ..host import FileEdit
from ..workspace.folders import Workspace, uri_for
from ..workspace.places import broad_root, user_places
from .blobs import BlobStore
from .checkpoint_records import CheckpointFile, CheckpointRecord, FileState
from .edited_texts import text_state
from .prune import maybe_prune
from .scan import Change, Seen, TooManyFiles, TreeScanner, changes
from .scan_cache import cache_path, load_scan, save_scan
from .writer import SessionLogWriter

log = logging.getLogger(__name__)

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
"""Files larger than this are recorded as not restorable (``checkpointMaxFileBytes``)."""


def new_checkpoint_id() -> str:
    return "c-" + uuid.uuid4().hex[:12]


@dataclass
class _Scanner:
    scanner: TreeScanner
    lock: threading.Lock
    cache: Path
    """Where its last scan is kept for the next process (``scan_cache.py``)."""
    loaded: bool = False
    saved_at: float = 0.0


SAVE_AFTER_READS = 200
"""A scan that read this many files is kept at once (a first scan, a checkout)."""
SAVE_EVERY_SECONDS = 60.0
"""Otherwise a changed scan is kept at most this often."""


SCANNERS_KEPT = 4
"""Workspaces whose last scan a process keeps (the least recently used one is dropped: its
next scan reads every file again)."""

_scanners: OrderedDict[tuple[Path, tuple[Path, ...], int], _Scanner] = OrderedDict()
_scanners_lock = threading.Lock()


def scanner_for(state_dir: Path, roots: tuple[Path, ...], cap: int) -> _Scanner:
    """The process's scanner of a workspace (its last scan is what the next one compares
    with), one at a time."""
    key = (state_dir, roots, cap)
    with _scanners_lock:
        found = _scanners.get(key)
        if found is None:
            store = BlobStore(state_dir)
            skip = (state_dir.resolve(),)
            scanner = TreeScanner(roots, store, cap, skip)
            cache = cache_path(store, roots, cap)
            found = _scanners[key] = _Scanner(scanner, threading.Lock(), cache)
            while len(_scanners) > SCANNERS_KEPT:
                _scanners.popitem(last=False)
        _scanners.move_to_end(key)
        return found


def _scan(scanner: _Scanner, changed_only: bool = False) -> dict[str, Seen]:
    """A scan (blocking): with ``changed_only``, listing again only the folders the watch
    says changed since the last full scan (``TreeScanner.scan_changed``), else a full one.
    The first of a process starts from the scan kept by the last one, and a scan that read
    much, or any changed one now and then, is kept for the next."""
    with scanner.lock:
        tree = scanner.scanner
        if not scanner.loaded:
            scanner.loaded = True
            tree.close()  # entries not listed by this process: the next scan is full
            tree.last = load_scan(scanner.cache, tree.roots, tree.store)
        found = tree.scan_changed() if changed_only else tree.scan()
        now = time.monotonic()
        reads = tree.read_count
        if reads >= SAVE_AFTER_READS or (reads and now - scanner.saved_at >= SAVE_EVERY_SECONDS):
            try:
                save_scan(scanner.cache, tree.roots, found)
                scanner.saved_at = now
            except OSError as exc:  # only the next process's first scan is slower
                log.warning("cannot keep the workspace's scan: %s", exc.strerror or exc)
        return found


class _AfterScan:
    """The full scan after a ``bash`` step, run in a thread of its own from the moment the
    step ends, while its result goes back to the model; ``settle`` waits for it."""

    def __init__(self, scanner: _Scanner, before: dict[str, Seen]) -> None:
        self.found: list[Change] = []
        self.error: Exception | None = None
        self.done = threading.Event()
        self._scanner = scanner
        self._before = before
        thread = threading.Thread(target=self._run, name="tether-checkpoint-scan", daemon=True)
        thread.start()

    def _run(self) -> None:
        try:
            self.found = changes(self._before, _scan(self._scanner))
        except Exception as exc:  # reported by whoever settles it
            self.error = exc
        finally:
            self.done.set()


@dataclass
class _Taken:
    id: str
    tool: str
    call_id: str
    title: str
    step: int
    at: float
    change: FileEdit | None
    before: dict[str, Seen] | None
    problem: str | None = None


class SessionCheckpoints:
    """A run's checkpoints (``tools.base.StepCheckpoints``), written to its session's log."""

    def __init__(
        self,
        writer: SessionLogWriter,
        session_id: str,
        run_id: str,
        workspace: Workspace,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        store_max_bytes: int | None = None,
    ) -> None:
        self._writer = writer
        self._session_id = session_id
        self._run_id = run_id
        self._workspace = workspace
        self._cap = max_file_bytes
        self._store_max = store_max_bytes
        """The store's size limit (None: not pruned from here)."""
        self._store = BlobStore(writer.state_dir)
        self._pending: tuple[_Taken, _AfterScan] | None = None
        """The last ``bash`` step's scan after it, not recorded yet."""

    async def settle(self) -> None:
        """Wait for the last step's scan after it (still running in its thread) and record
        its checkpoint: before the next step's scan (what it finds is the next step's),
        and at the run's end (the session's checkpoints are complete once it ended)."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        taken, scan = pending
        with anyio.CancelScope(shield=True):  # one scan at most; the record is not lost
            if not scan.done.is_set():
                await anyio.to_thread.run_sync(scan.done.wait)
            if scan.error is not None:
                taken.problem = _problem(scan.error)
                log.warning("checkpoint after %s not taken: %s", taken.tool, taken.problem)
            self._record(taken, scan.found)

    async def before(
        self, tool: str, call_id: str, title: str, change: FileEdit | None, step: int
    ) -> object:
        await self.settle()
        taken = _Taken(new_checkpoint_id(), tool, call_id, title, step, time.time(), change, None)
        try:
            if change is not None:
                taken.before = await anyio.to_thread.run_sync(self._file_before, change)
            elif (broad := await anyio.to_thread.run_sync(self._broad_root)) is not None:
                taken.problem = broad
            else:
                scanner = scanner_for(self._writer.state_dir, self._workspace.roots, self._cap)
                taken.before = await anyio.to_thread.run_sync(_scan, scanner, True)
        except Exception as exc:  # a checkpoint never stops a step
            taken.problem = _problem(exc)
            log.warning("checkpoint before %s not taken: %s", tool, taken.problem)
        return taken

    def _broad_root(self) -> str | None:
        """Why commands' changes are not scanned in this workspace: a folder of it is ``/``,
        the home folder or above it (allowed by ``allowBroadWorkspace``), where a scan would
        read and keep every file of the user's (up to 200,000). Edits are still kept."""
        places = user_places()
        for root in self._workspace.roots:
            what = broad_root(root, places)
            if what is not None:
                return (
                    f"the workspace folder {root} is {what}: what commands change there is "
                    "not scanned (edits are kept)"
                )
        return None

    def _file_before(self, change: FileEdit) -> dict[str, Seen]:
        if change.create:
            return {}
        path = change.path
        return {str(path): text_state(path, change.base_text, change.bom, self._store, self._cap)}

    def _file_after(self, taken: _Taken, edits: tuple[FileEdit, ...]) -> list[Change]:
        before = taken.before or {}
        after = dict(before)
        for edit in edits:
            after[str(edit.path)] = text_state(
                edit.path, edit.new_text, edit.bom, self._store, self._cap
            )
        return changes(before, after)

    async def after(self, taken: object, edits: tuple[FileEdit, ...]) -> None:
        """Record what the step changed: an edit's file at once; for ``bash`` and MCP
        tools, a full scan started now in a thread of its own and recorded by ``settle``
        (the step's result goes back to the model meanwhile)."""
        assert isinstance(taken, _Taken)
        await self.settle()  # none is pending between a step's before and after
        found: list[Change] = []
        if taken.before is not None:
            try:
                if taken.change is not None:
                    found = await anyio.to_thread.run_sync(self._file_after, taken, edits)
                else:
                    scanner = scanner_for(self._writer.state_dir, self._workspace.roots, self._cap)
                    self._pending = (taken, _AfterScan(scanner, taken.before))
                    return
            except Exception as exc:  # a checkpoint never stops a step
                taken.problem = _problem(exc)
                log.warning("checkpoint after %s not taken: %s", taken.tool, taken.problem)
        self._record(taken, found)

    def _record(self, taken: _Taken, found: list[Change]) -> None:
        record = CheckpointRecord(
            id=taken.id,
            run_id=self._run_id,
            call_id=taken.call_id,
            step=taken.step,
            tool=taken.tool,
            title=taken.title,
            at=taken.at,
            files=[change_record(c) for c in found],
            incomplete=taken.problem,
        )
        self._writer.append(self._session_id, record)
        if self._store_max is not None and found:
            maybe_prune(self._writer.state_dir, self._store_max)


def change_record(change: Change) -> CheckpointFile:
    return CheckpointFile(
        path=str(change.path),
        uri=uri_for(change.path),
        before=None if change.before is None else FileState.of(change.before),
        after=None if change.after is None else FileState.of(change.after),
    )


def _problem(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return f"the checkpoint store cannot be written: {exc.strerror or exc}"
    if isinstance(exc, TooManyFiles):
        return str(exc)
    log.exception("checkpoint failed")
    return f"internal error: {type(exc).__name__}: {exc}"
