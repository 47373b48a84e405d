"""Stored sessions: list them, read one back, find the session a run belongs to.

Listing and finding read each session's index (``index.py``), never a whole log; only
``load`` (a session resumed, its history, an undo) reads the log itself.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread

from tether_protocol import SessionInfo

from .index import SessionIndex, catch_up, current_index, session_log_path
from .records import SessionData, read_session

if TYPE_CHECKING:
    from .writer import SessionLogWriter


def load(state_dir: Path, session_id: str) -> SessionData | None:
    """A session from its log, or None when there is no such session."""
    path = session_log_path(state_dir, session_id)
    if not path.is_file():
        return None
    return read_session(path, session_id)


async def stored_session(writer: SessionLogWriter, session_id: str) -> SessionData | None:
    """``load`` once what ``writer`` has queued is written, off the event loop."""
    await anyio.to_thread.run_sync(writer.flush)
    return await anyio.to_thread.run_sync(load, writer.state_dir, session_id)


def _time(stamp: float) -> str:
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")


def describe(path: Path) -> SessionInfo | None:
    """A summary of one log from its index: title (first prompt), times, runs and the last
    outcome; None for a log without runs, or one that cannot be read."""
    index = current_index(path)
    if index is None or not index.run_ids:
        return None
    return SessionInfo(
        session_id=path.stem,
        title=index.title,
        created_at=_time(index.created_at),
        updated_at=_time(index.updated_at),
        runs=len(index.run_ids),
        last_outcome=index.last_outcome,
    )


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # deleted since it was listed
        return 0.0


def _logs(state_dir: Path) -> list[Path]:
    folder = state_dir / "sessions"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


def list_sessions(state_dir: Path, limit: int | None = None) -> list[SessionInfo]:
    """Stored sessions, most recently updated first."""
    sessions: list[SessionInfo] = []
    for path in sorted(_logs(state_dir), key=_modified, reverse=True):
        info = describe(path)
        if info is not None:
            sessions.append(info)
            if limit is not None and len(sessions) >= limit:
                break
    return sessions


async def stored_sessions(writer: SessionLogWriter, limit: int | None) -> list[SessionInfo]:
    """``list_sessions`` once what ``writer`` has queued is written, off the event loop."""
    await anyio.to_thread.run_sync(writer.flush)
    return await anyio.to_thread.run_sync(list_sessions, writer.state_dir, limit)


class RunIndex:
    """Which stored session each run belongs to (from the sessions' indexes).

    A refresh reads each log's stored index once, then only what was appended to the log
    since (a log replaced or cut short is read again); safe to use from several threads.
    """

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self._known: dict[Path, SessionIndex] = {}
        self._lock = threading.Lock()

    def refresh(self) -> None:
        """Bring every session's run ids up to date."""
        with self._lock:
            paths = set(_logs(self.state_dir))
            for gone in set(self._known) - paths:
                del self._known[gone]
            for path in paths:
                known = self._known.get(path)
                if known is None:
                    found = current_index(path)
                else:
                    try:
                        found, _ = catch_up(path, known)
                    except OSError:
                        continue  # unreadable now: keep what was known
                if found is not None:
                    self._known[path] = found

    def sessions_of(self, run_id: str) -> list[str]:
        """The sessions with a run ``run_id``, most recently updated first (as of the last
        refresh)."""
        with self._lock:
            paths = [p for p, index in self._known.items() if run_id in index.run_ids]
        return [p.stem for p in sorted(paths, key=_modified, reverse=True)]


def find_run(state_dir: Path, run_id: str) -> str | None:
    """The session whose log started a run ``run_id`` (the latest one updated, if several)."""
    index = RunIndex(state_dir)
    index.refresh()
    found = index.sessions_of(run_id)
    return found[0] if found else None
