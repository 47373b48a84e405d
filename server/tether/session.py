"""The session log: every event of every run, appended as it happens, one JSONL file a session.

Writes go through one background thread so the event loop never blocks on the disk; the
thread flushes after every batch it takes, so a crash loses at most the events in flight.
Events arrive already serialized (the editor notification needed the same JSON); records
are serialized by the thread, long strings (an edit's whole file, before and after) a
slice at a time so that the thread never holds the interpreter for long. Only the most
recently written files stay open.
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

from tether_protocol import RunEvent

from .events import event_json
from .host import FileEdit
from .providers.base import Message
from .sessionlog import (
    EditIntentRecord,
    EditOutcomeRecord,
    HistoryRecord,
    LoggedMessage,
    MessageRecord,
)

log = logging.getLogger(__name__)

SLICE_CHARS = 1 << 18
"""Long strings are encoded this many characters at a time (about a millisecond each)."""
MAX_OPEN_LOGS = 8
"""Log files kept open between writes; older ones are closed (a session per prompt would
otherwise hold a file descriptor, and its buffer, for the server's whole life)."""


_WHOLE_TEXTS = (EditIntentRecord, HistoryRecord)
"""Records that may carry whole files or conversations: written with ``json_pieces``."""


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


def session_log_path(state_dir: Path, session_id: str) -> Path:
    """Where a session's log lives (the id is made file-name safe)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)
    return state_dir / "sessions" / f"{safe}.jsonl"


WriteErrorHandler = Callable[[str], None]
"""Told, once and from the writer's thread, that the state dir cannot be written."""


class SessionLogWriter:
    """Appends events to per-session JSONL files from a background thread.

    A state dir that cannot be written (read-only, full, not a folder) never stops a run:
    the first failure is logged as one line and passed to ``on_error`` (the server shows
    it to the user); later ones are only counted, not a traceback per event.
    """

    def __init__(self, state_dir: Path, on_error: WriteErrorHandler | None = None) -> None:
        self.state_dir = state_dir
        self.on_error = on_error
        self.failed_writes = 0
        self._queue: queue.SimpleQueue[tuple[Path, BaseModel | bytes] | threading.Event | None] = (
            queue.SimpleQueue()
        )
        self._files: OrderedDict[Path, IO[bytes]] = OrderedDict()
        self._thread = threading.Thread(target=self._work, name="tether-session-log", daemon=True)
        self._thread.start()

    def append(self, session_id: str, item: BaseModel | bytes) -> None:
        """Queue one event or record (or a line of JSON) for its session's file; never blocks."""
        self._queue.put((session_log_path(self.state_dir, session_id), item))

    def flush(self, timeout: float = 2.0) -> bool:
        """Wait until everything queued so far is written and flushed."""
        done = threading.Event()
        self._queue.put(done)
        return done.wait(timeout)

    def close(self, timeout: float = 1.0) -> None:
        """Write what is queued, close the files and stop the thread."""
        self._queue.put(None)
        self._thread.join(timeout)

    def _work(self) -> None:
        stopping = False
        while not stopping:
            items = [self._queue.get()]
            while True:  # take the whole batch, then flush once
                try:
                    items.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            touched: set[Path] = set()
            waiting: list[threading.Event] = []
            for item in items:
                if item is None:
                    stopping = True
                    continue
                if isinstance(item, threading.Event):
                    waiting.append(item)
                    continue
                path, event = item
                try:
                    handle = self._file(path)
                    handle.write(_line(event) + b"\n")
                    touched.add(path)
                except OSError as exc:
                    self._failed("write", exc)
            for path in touched:
                written = self._files.get(path)  # None: closed (so flushed) to make room
                try:
                    if written is not None:
                        written.flush()
                except OSError as exc:
                    self._failed("flush", exc)
            for done in waiting:
                done.set()
        for handle in self._files.values():
            try:
                handle.close()
            except OSError as exc:
                self._failed("close", exc)

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
            path.parent.mkdir(parents=True, exist_ok=True)
            handle = self._files[path] = path.open("a+b")
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

    def message(self, message: Message) -> None:
        """A message joined the conversation."""
        record = MessageRecord(run_id=self._run_id, message=LoggedMessage.of(message))
        self._writer.append(self._session_id, record)

    def history(self, messages: Sequence[Message]) -> None:
        """The conversation was replaced as a whole (compaction)."""
        logged = [LoggedMessage.of(m) for m in messages]
        self._writer.append(self._session_id, HistoryRecord(run_id=self._run_id, messages=logged))

    async def intended(self, edit: FileEdit) -> str:
        """Log an edit about to be sent and wait until the line is written (a kill -9
        right after the editor applied it must not lose it); its id."""
        edit_id = f"{self._run_id}.e{next(self._edit_ids)}"
        record = EditIntentRecord(
            edit_id=edit_id,
            run_id=self._run_id,
            uri=edit.uri,
            path=str(edit.path),
            before=edit.base_text,
            after=edit.new_text,
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
    """An ``EventSink`` that appends a run's events to its session's log."""

    def __init__(self, writer: SessionLogWriter, session_id: str) -> None:
        self._writer = writer
        self._session_id = session_id

    def publish(self, event: RunEvent) -> None:
        self._writer.append(self._session_id, event_json(event))
