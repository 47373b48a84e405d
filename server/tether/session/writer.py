"""Writing sessions: every event of every run, appended as it happens, one JSONL file a
session, with its index (``index.py``) kept next to it.

Writes go through one background thread so the event loop never blocks on the disk; the
thread flushes after every batch it takes, so a crash loses at most the events in flight.
Events arrive already serialized (the editor notification needed the same JSON); records
are serialized by the thread, long strings (a conversation after a compaction) a slice at
a time so that the thread never holds the interpreter for long. Only the most recently
written files stay open.
"""

from __future__ import annotations

import itertools
import json
import logging
import queue
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import anyio.to_thread
from pydantic import BaseModel

from tether_protocol import TRANSIENT_KINDS, RunEvent

from ..events import event_json
from ..host import FileEdit
from ..providers.base import Message
from ..writes.private import append_private, make_folders, narrow
from .index import SessionIndex, catch_up, read_index, session_log_path, write_index
from .lock import SessionLocks
from .records import (
    EditIntentRecord,
    EditOutcomeRecord,
    EditRecord,
    EditWindow,
    HistoryRecord,
    LoggedMessage,
    MessageRecord,
    RunErrorRecord,
    WorkspaceRecord,
)

log = logging.getLogger(__name__)

SLICE_CHARS = 1 << 18
"""Long strings are encoded this many characters at a time (about a millisecond each)."""
MAX_OPEN_LOGS = 8
"""Log files kept open between writes; older ones are closed (a session per prompt would
otherwise hold a file descriptor, and its buffer, for the server's whole life)."""


_WHOLE_TEXTS = (EditIntentRecord, EditRecord, HistoryRecord)
"""Records that may carry long texts (a conversation; a new file; whole files, as in older
logs): written with ``json_pieces``."""


def _encode(text: str) -> bytes:
    # A lone surrogate (an editor may send one) becomes a JSON \\uXXXX escape.
    return text.encode("utf-8", "backslashreplace")


def json_pieces(value: Any) -> Iterator[bytes]:
    """Compact JSON for ``value`` (JSON data), in pieces: long strings a slice at a time.

    A 10 MB string in one ``json.dumps`` holds the interpreter lock for tens of
    milliseconds, stalling the event loop; between slices the loop gets its turn.
    """
    if isinstance(value, str) and len(value) > SLICE_CHARS:
        yield b'"'
        for start in range(0, len(value), SLICE_CHARS):
            piece = json.dumps(value[start : start + SLICE_CHARS], ensure_ascii=False)
            yield _encode(piece[1:-1])
            time.sleep(0)  # let a waiting thread (the event loop) run
        yield b'"'
    elif isinstance(value, dict):
        yield b"{"
        for index, (key, item) in enumerate(value.items()):
            yield (b"," if index else b"") + _encode(json.dumps(key, ensure_ascii=False)) + b":"
            yield from json_pieces(item)
        yield b"}"
    elif isinstance(value, list):
        yield b"["
        for index, item in enumerate(value):
            if index:
                yield b","
            yield from json_pieces(item)
        yield b"]"
    else:
        yield _encode(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def _line(item: BaseModel | bytes) -> bytes:
    """One log line (without its newline)."""
    if isinstance(item, bytes):
        return item
    if not isinstance(item, _WHOLE_TEXTS):
        try:
            return item.model_dump_json(by_alias=True, exclude_none=True).encode()
        except ValueError:  # a lone surrogate: json_pieces escapes it
            pass
    return b"".join(json_pieces(item.model_dump(mode="json", by_alias=True, exclude_none=True)))


def new_session_id() -> str:
    """A fresh session id."""
    return "s-" + uuid.uuid4().hex[:16]


WriteErrorHandler = Callable[[str], None]
"""Told, once and from the writer's thread, that the state dir cannot be written."""

INDEX_EVERY_SECONDS = 0.5
"""A session's index is stored at least this often while its log grows (and at once when
a run starts or finishes, on ``flush`` and on ``close``); readers catch up the rest."""
MAX_KEPT_INDEXES = 64

_RETIRE = object()
"""Queued by ``retire``: stop once no run holding the writer is in flight."""
_Queued = tuple[Path, BaseModel | bytes] | threading.Event | object | None
"""A line for a log, a flush waiting, ``_RETIRE``, or None (close)."""


class SessionLogWriter:
    """Appends events to per-session JSONL files from a background thread, and keeps each
    session's index (``index.py``) next to its log.

    What it makes is the user's alone: folders 0700, logs and indexes 0600, from creation
    (``writes/private.py``); a state dir of theirs that lets others in is narrowed when the
    writer starts. A state dir that cannot be written (read-only, full, not a folder) never
    stops a run: the first failure is logged as one line and passed to ``on_error`` (the
    server shows it to the user); later ones are only counted, not a traceback per event.

    Runs hold the writer they started with (``hold``) until their ``run-finished`` event is
    written: a writer ``retire``d (the state dir changed) closes only after the last one.
    """

    def __init__(
        self,
        state_dir: Path,
        on_error: WriteErrorHandler | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.state_dir = state_dir
        self.on_error = on_error
        self.locks = SessionLocks(state_dir)
        """The sessions open for prompting in this process, written here (``lock.py``)."""
        self.failed_writes = 0
        self._clock = clock
        self._queue: queue.SimpleQueue[_Queued] = queue.SimpleQueue()
        self._files: OrderedDict[Path, IO[bytes]] = OrderedDict()
        self._indexes: OrderedDict[Path, SessionIndex] = OrderedDict()
        self._stored_at: dict[Path, float] = {}
        self._unstored: set[Path] = set()
        """Logs whose index in memory is newer than the stored one."""
        self._holding: set[str] = set()
        self._holding_lock = threading.Lock()
        self._retired = False
        self._stopped = threading.Event()
        """Set when the thread has written its last: a flush asked later has nothing to wait for."""
        self._thread = threading.Thread(target=self._work, name="tether-session-log", daemon=True)
        self._thread.start()

    @property
    def closed(self) -> bool:
        """Whether the thread has stopped (closed, or retired and its last run finished)."""
        return not self._thread.is_alive()

    def wait_closed(self, timeout: float) -> bool:
        """Wait (blocking) until the thread has stopped; whether it has."""
        self._thread.join(timeout)
        return self.closed

    def append(self, session_id: str, item: BaseModel | bytes) -> None:
        """Queue one event or record (or a line of JSON) for its session's file; never blocks."""
        self._queue.put((session_log_path(self.state_dir, session_id), item))

    def hold(self, run_id: str) -> None:
        """A run writes here until its ``run-finished`` event: a retired writer waits for it."""
        with self._holding_lock:
            self._holding.add(run_id)

    def let_go(self, run_id: str) -> None:
        """A holder that ends without a ``run-finished`` event (``/compact``) is done."""
        with self._holding_lock:
            self._holding.discard(run_id)

    def retire(self) -> None:
        """Close once every run holding this writer has finished (new runs use another)."""
        self._queue.put(_RETIRE)

    def flush(self, timeout: float = 2.0) -> bool:
        """Wait until everything queued so far is written and flushed (indexes too); at
        once when the writer has stopped (closed or retired), which writes nothing more."""
        done = threading.Event()
        self._queue.put(done)
        if self._stopped.is_set():  # the thread's last look at the queue may have been before
            return True
        return done.wait(timeout)

    def close(self, timeout: float = 1.0) -> None:
        """Write what is queued, close the files and stop the thread; the sessions claimed
        through ``locks`` are let go."""
        self._queue.put(None)
        self._thread.join(timeout)
        self.locks.release_all()

    def _work(self) -> None:
        narrow(self.state_dir)  # one the user made wider than theirs alone: narrowed, said once
        stopping = False
        while not stopping:
            items = [self._queue.get()]
            while True:  # take the whole batch, then flush once
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            touched: set[Path] = set()
            milestones: set[Path] = set()
            waiting: list[threading.Event] = []
            for item in items:
                if item is None:
                    stopping = True
                elif item is _RETIRE:
                    self._retired = True
                elif isinstance(item, threading.Event):
                    waiting.append(item)
                elif isinstance(item, tuple):
                    path, event = item
                    if self._write(path, event):
                        milestones.add(path)
                    touched.add(path)
            for path in touched:
                written = self._files.get(path)  # None: closed (so flushed) to make room
                try:
                    if written is not None:
                        written.flush()
                except OSError as exc:
                    self._failed("flush", exc)
            self._unstored |= touched
            self._store_indexes(everything=bool(waiting), now=milestones)
            for done in waiting:
                done.set()
            with self._holding_lock:
                stopping = stopping or (self._retired and not self._holding)
        for handle in self._files.values():
            try:
                handle.close()
            except OSError as exc:
                self._failed("close", exc)
        self._store_indexes(everything=True, now=set())
        self._stopped.set()
        while True:  # a flush asked while it stopped: answered (``flush`` checks the rest)
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, threading.Event):
                item.set()

    def _write(self, path: Path, item: BaseModel | bytes) -> bool:
        """Append one line and count it in the session's index; whether a run started or
        finished with it."""
        line = _line(item) + b"\n"
        try:
            handle = self._file(path)
            index = self._index(path, handle)
            handle.write(line)
        except OSError as exc:
            self._failed("write", exc)
            # not written, so not counted: a throwaway index only tells if it ended a run
            index = SessionIndex(created_at=0.0, updated_at=0.0)
            handle = None
        seen = index.observe(line[:-1])
        if handle is not None:
            index.covered(handle.tell(), line)
            index.updated_at = self._clock()
        if seen is not None and seen[0] == "run-finished":  # written or not, the run ended
            with self._holding_lock:
                self._holding.discard(seen[1])
        return seen is not None and handle is not None

    def _index(self, path: Path, handle: IO[bytes]) -> SessionIndex:
        """The session's index, up to date with its open log (read, caught up or begun the
        first time this writer touches the session)."""
        index = self._indexes.get(path)
        if index is not None:
            self._indexes.move_to_end(path)
            return index
        stored = read_index(path)
        if stored is None and handle.tell() == 0:  # a new session: it begins now
            index = SessionIndex(created_at=self._clock(), updated_at=self._clock())
        else:
            handle.flush()  # catch_up reads the file, torn-line fix included
            index, _ = catch_up(path, stored)
        while len(self._indexes) >= MAX_KEPT_INDEXES:
            evicted, oldest = self._indexes.popitem(last=False)
            self._stored_at.pop(evicted, None)
            if evicted in self._unstored:
                self._store(evicted, oldest)
                self._unstored.discard(evicted)
        self._indexes[path] = index
        return index

    def _store_indexes(self, everything: bool, now: set[Path]) -> None:
        """Store the indexes that changed, unless stored very recently (a reader catches up
        what an index lacks); all of them when asked to (flush, close)."""
        moment = time.monotonic()
        for path in list(self._unstored):
            index = self._indexes.get(path)
            recently = moment - self._stored_at.get(path, -INDEX_EVERY_SECONDS)
            if index is None:  # its line could not be written: nothing to store
                self._unstored.discard(path)
            elif everything or path in now or recently >= INDEX_EVERY_SECONDS:
                self._store(path, index)
                self._stored_at[path] = moment
                self._unstored.discard(path)

    def _store(self, path: Path, index: SessionIndex) -> None:
        try:
            write_index(path, index)
        except OSError as exc:
            self._failed("write the index of", exc)

    def _failed(self, action: str, exc: OSError) -> None:
        """Report the first failure to write the state dir; count the others."""
        self.failed_writes += 1
        if self.failed_writes > 1:
            return
        message = (
            f"cannot {action} session logs in {self.state_dir} ({exc.strerror or exc}); runs go "
            "on, but sessions are not saved (no resume, history or undo after a restart). "
            "Set stateDir or TETHER_STATE_DIR to a writable folder."
        )
        log.warning("%s", message)
        if self.on_error is not None:
            try:
                self.on_error(message)
            except Exception:  # the report must not end the writer thread
                log.exception("reporting a session log error failed")

    def _file(self, path: Path) -> IO[bytes]:
        handle = self._files.get(path)
        if handle is not None:
            self._files.move_to_end(path)
        else:
            while len(self._files) >= MAX_OPEN_LOGS:
                _, oldest = self._files.popitem(last=False)
                try:
                    oldest.close()  # flushes what it holds
                except OSError as exc:
                    self._failed("close", exc)
            make_folders(path.parent)  # the user's alone (0700), as the log (0600)
            handle = self._files[path] = append_private(path)
            handle.seek(0, 2)
            if handle.tell() > 0:  # a crash may have torn the last line: start a fresh one
                handle.seek(-1, 2)
                if handle.read(1) != b"\n":
                    handle.write(b"\n")
        return handle


class SessionRecorder:
    """Writes a run's conversation messages and applied edits to its session's log."""

    def __init__(self, writer: SessionLogWriter, session_id: str, run_id: str) -> None:
        self._writer = writer
        self._session_id = session_id
        self._run_id = run_id
        self._edit_ids = itertools.count(1)
        writer.hold(run_id)  # the run writes here to its end, even if the state dir changes

    def message(self, message: Message) -> None:
        """A message joined the conversation."""
        record = MessageRecord(run_id=self._run_id, message=LoggedMessage.of(message))
        self._writer.append(self._session_id, record)

    def history(self, messages: Sequence[Message]) -> None:
        """The conversation was replaced as a whole (compaction)."""
        logged = [LoggedMessage.of(m) for m in messages]
        self._writer.append(self._session_id, HistoryRecord(run_id=self._run_id, messages=logged))

    def workspace(self, roots: Sequence[Path]) -> None:
        """The folders the run works in (the first is the session's folder)."""
        record = WorkspaceRecord(run_id=self._run_id, roots=[str(r) for r in roots])
        self._writer.append(self._session_id, record)

    def error(self, text: str) -> None:
        """The run ended with this error."""
        self._writer.append(self._session_id, RunErrorRecord(run_id=self._run_id, error=text))

    async def intended(self, edit: FileEdit) -> str:
        """Log an edit about to be sent and wait until the line is written (a kill -9
        right after the editor applied it must not lose it); its id."""
        edit_id = f"{self._run_id}.e{next(self._edit_ids)}"
        # hashing and comparing a large file takes milliseconds: not on the event loop
        # From the lines around the edit's changes: its whole text after is not made.
        window = await anyio.to_thread.run_sync(EditWindow.of_edit, edit)
        record = EditIntentRecord(
            edit_id=edit_id,
            run_id=self._run_id,
            uri=edit.uri,
            path=str(edit.path),
            window=window,
            created=edit.create,
        )
        self._writer.append(self._session_id, record)
        await anyio.to_thread.run_sync(self._writer.flush)
        return edit_id

    def outcome(self, edit_id: str, applied: bool) -> None:
        """Whether the edit logged as ``edit_id`` was applied."""
        record = EditOutcomeRecord(edit_id=edit_id, run_id=self._run_id, applied=applied)
        self._writer.append(self._session_id, record)


class SessionSink:
    """An ``EventSink`` that appends a run's events to its session's log (not the transient
    ones: a running command's reports are true only while it runs)."""

    def __init__(self, writer: SessionLogWriter, session_id: str) -> None:
        self._writer = writer
        self._session_id = session_id

    def publish(self, event: RunEvent) -> None:
        if event.kind in TRANSIENT_KINDS:
            return
        self._writer.append(self._session_id, event_json(event))
