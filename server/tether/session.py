"""The session log: every event of every run, appended as it happens, one JSONL file a session.

Writes go through one background thread so the event loop never blocks on the disk; the
thread flushes after every batch it takes, so a crash loses at most the events in flight.
"""

from __future__ import annotations

import logging
import queue
import threading
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from pydantic import BaseModel

from tether_protocol import RunEvent

from .host import FileEdit
from .providers.base import Message
from .sessionlog import EditRecord, HistoryRecord, LoggedMessage, MessageRecord

log = logging.getLogger(__name__)


def new_session_id() -> str:
    """A fresh session id."""
    return "s-" + uuid.uuid4().hex[:16]


def session_log_path(state_dir: Path, session_id: str) -> Path:
    """Where a session's log lives (the id is made file-name safe)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)
    return state_dir / "sessions" / f"{safe}.jsonl"


class SessionLogWriter:
    """Appends events to per-session JSONL files from a background thread."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self._queue: queue.SimpleQueue[tuple[Path, BaseModel] | threading.Event | None] = (
            queue.SimpleQueue()
        )
        self._files: dict[Path, IO[bytes]] = {}
        self._thread = threading.Thread(target=self._work, name="tether-session-log", daemon=True)
        self._thread.start()

    def append(self, session_id: str, item: BaseModel) -> None:
        """Queue one event or record for its session's file; never blocks."""
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
                    line = event.model_dump_json(by_alias=True, exclude_none=True)
                    self._file(path).write(line.encode() + b"\n")
                    touched.add(path)
                except OSError:
                    log.exception("cannot write session log %s", path)
            for path in touched:
                try:
                    self._files[path].flush()
                except OSError:
                    log.exception("cannot flush session log %s", path)
            for done in waiting:
                done.set()
        for handle in self._files.values():
            handle.close()

    def _file(self, path: Path) -> IO[bytes]:
        handle = self._files.get(path)
        if handle is None:
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

    def message(self, message: Message) -> None:
        """A message joined the conversation."""
        record = MessageRecord(run_id=self._run_id, message=LoggedMessage.of(message))
        self._writer.append(self._session_id, record)

    def history(self, messages: Sequence[Message]) -> None:
        """The conversation was replaced as a whole (compaction)."""
        logged = [LoggedMessage.of(m) for m in messages]
        self._writer.append(self._session_id, HistoryRecord(run_id=self._run_id, messages=logged))

    def edit(self, edit: FileEdit) -> None:
        """An edit was applied (kept for ``agent/undo``)."""
        record = EditRecord(
            run_id=self._run_id,
            uri=edit.uri,
            path=str(edit.path),
            before=edit.base_text,
            after=edit.new_text,
            created=edit.create,
        )
        self._writer.append(self._session_id, record)


class SessionSink:
    """An ``EventSink`` that appends a run's events to its session's log."""

    def __init__(self, writer: SessionLogWriter, session_id: str) -> None:
        self._writer = writer
        self._session_id = session_id

    def publish(self, event: RunEvent) -> None:
        self._writer.append(self._session_id, event)
