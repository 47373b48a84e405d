"""Stored sessions: list them, read one back, find the session a run belongs to."""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from tether_protocol import RunFinishedEvent, RunStartedEvent, SessionInfo, parse_event

from .session import session_log_path
from .sessionlog import SessionData, read_session

TITLE_CHARS = 80
TAIL_BYTES = 64


def load(state_dir: Path, session_id: str) -> SessionData | None:
    """A session from its log, or None when there is no such session."""
    path = session_log_path(state_dir, session_id)
    if not path.is_file():
        return None
    return read_session(path, session_id)


def _time(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")


def describe(path: Path) -> SessionInfo | None:
    """A summary of one log: title (first prompt), times, runs and the last outcome.

    Lines that are not well-formed events are passed over (``read_session`` reports them
    when the session is loaded): one bad line must not hide the session, or the others.
    """
    title, runs, last = "", 0, None
    try:
        lines = path.read_bytes().splitlines()
        status = path.stat()
    except OSError:
        return None
    for raw in lines:
        if b'"record"' in raw or b'"run-' not in raw:
            continue  # only run-started / run-finished events matter here
        try:
            event = parse_event(json.loads(raw))
        except (ValueError, ValidationError):
            continue
        if isinstance(event, RunStartedEvent):
            runs += 1
            if not title:
                prompt = " ".join(event.prompt.split())
                title = prompt if len(prompt) <= TITLE_CHARS else prompt[: TITLE_CHARS - 1] + "…"
        elif isinstance(event, RunFinishedEvent):
            last = event.outcome
    if runs == 0:
        return None
    return SessionInfo(
        session_id=path.stem,
        title=title,
        created_at=_time(status.st_ctime),
        updated_at=_time(status.st_mtime),
        runs=runs,
        last_outcome=last,
    )


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # deleted since it was listed
        return 0.0


def list_sessions(state_dir: Path, limit: int | None = None) -> list[SessionInfo]:
    """Stored sessions, most recently updated first."""
    folder = state_dir / "sessions"
    if not folder.is_dir():
        return []
    paths = sorted(folder.glob("*.jsonl"), key=_modified, reverse=True)
    sessions: list[SessionInfo] = []
    for path in paths:
        info = describe(path)
        if info is not None:
            sessions.append(info)
            if limit is not None and len(sessions) >= limit:
                break
    return sessions


@dataclass
class _Scanned:
    inode: int
    offset: int
    tail: bytes = b""
    """The last bytes read: a log rewritten in place no longer has them there."""
    run_ids: set[str] = field(default_factory=set)


def _started_runs(chunk: bytes) -> set[str]:
    """The run ids of the ``run-started`` events among these complete log lines."""
    found: set[str] = set()
    for raw in chunk.split(b"\n"):
        if b'"run-started"' not in raw or b'"record"' in raw:
            continue
        try:
            event = json.loads(raw)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("kind") == "run-started":
            run_id = event.get("runId")
            if isinstance(run_id, str):
                found.add(run_id)
    return found


class RunIndex:
    """Which stored session each run belongs to (from the ``run-started`` events).

    Logs only grow, so a refresh reads just what was appended to each since the last one
    (a log replaced or cut short is read again); safe to use from several threads.
    """

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.folder = state_dir / "sessions"
        self._files: dict[Path, _Scanned] = {}
        self._lock = threading.Lock()

    def refresh(self) -> None:
        """Read what was appended to the logs since the last refresh."""
        with self._lock:
            paths = set(self.folder.glob("*.jsonl")) if self.folder.is_dir() else set()
            for gone in set(self._files) - paths:
                del self._files[gone]
            for path in paths:
                try:
                    self._scan(path)
                except OSError:
                    continue  # unreadable now: keep what was known

    def _scan(self, path: Path) -> None:
        with path.open("rb") as handle:
            info = os.fstat(handle.fileno())
            known = self._files.get(path)
            if known is not None and known.offset > 0:
                handle.seek(known.offset - len(known.tail))
                if handle.read(len(known.tail)) != known.tail:
                    known = None  # rewritten in place (repaired, replaced): read it again
            if known is None or known.inode != info.st_ino or info.st_size < known.offset:
                known = self._files[path] = _Scanned(info.st_ino, 0)
            if info.st_size == known.offset:
                return
            handle.seek(known.offset)
            chunk = handle.read(info.st_size - known.offset)
        complete = chunk.rfind(b"\n") + 1  # a line being written is read next time
        if complete:
            known.run_ids |= _started_runs(chunk[:complete])
            known.offset += complete
            known.tail = chunk[max(0, complete - TAIL_BYTES) : complete]

    def sessions_of(self, run_id: str) -> list[str]:
        """The sessions with a run ``run_id``, most recently updated first (as of the last
        refresh)."""
        with self._lock:
            paths = [p for p, scanned in self._files.items() if run_id in scanned.run_ids]

        def updated(path: Path) -> float:
            try:
                return path.stat().st_mtime
            except OSError:
                return 0.0

        return [p.stem for p in sorted(paths, key=updated, reverse=True)]


def find_run(state_dir: Path, run_id: str) -> str | None:
    """The session whose log started a run ``run_id`` (the latest one updated, if several)."""
    index = RunIndex(state_dir)
    index.refresh()
    found = index.sessions_of(run_id)
    return found[0] if found else None
