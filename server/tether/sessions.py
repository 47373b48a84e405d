"""Stored sessions: list them, read one back, find the session a run belongs to."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from tether_protocol import RunFinishedEvent, RunStartedEvent, SessionInfo, parse_event

from .session import session_log_path
from .sessionlog import SessionData, read_session

TITLE_CHARS = 80


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


def find_run(state_dir: Path, run_id: str) -> str | None:
    """The session whose log has a run with ``run_id``."""
    folder = state_dir / "sessions"
    needle = json.dumps(run_id).encode()
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        try:
            if needle in path.read_bytes():
                return path.stem
        except OSError:  # unreadable or deleted since listed: not this one
            continue
    return None
