"""The stored sessions as ACP shows them: ``session/list`` pages (the ``cwd`` filter, an
opaque cursor), ``session/delete``, and what a session brings back when it is opened again
(its folders, its cost so far).

A session's folder is the one its latest run worked in (the log's ``workspace`` record): a
session whose runs never said (an older Tether's) is not listed, since ACP needs a ``cwd``
for each. The order is the latest updated first; a cursor names the last session a page
showed, so a session updated meanwhile neither repeats nor hides another one.
"""

from __future__ import annotations

import base64
import contextlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tether_protocol import UsageEvent, parse_event

from ..session.index import current_index, index_path, session_log_path
from ..session.lock import lock_path
from ..session.records import SessionData
from ..text.display import shown

PAGE = 20
"""Sessions in one ``session/list`` answer."""


class BadCursor(ValueError):
    """A cursor this agent did not give."""


@dataclass(frozen=True, slots=True)
class Listed:
    session_id: str
    updated_at: float
    roots: list[str]
    title: str

    def key(self) -> tuple[float, str]:
        """Its place in the list: the latest updated first, then by id."""
        return (-self.updated_at, self.session_id)

    def to_wire(self) -> dict[str, Any]:
        info: dict[str, Any] = {"sessionId": self.session_id, "cwd": self.roots[0]}
        if self.roots[1:]:
            info["additionalDirectories"] = self.roots[1:]
        if self.title:
            info["title"] = shown(self.title)
        info["updatedAt"] = iso_time(self.updated_at)
        return info


def iso_time(stamp: float) -> str:
    """ISO 8601, UTC, to the second."""
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")


def _cursor(item: Listed) -> str:
    raw = json.dumps([item.updated_at, item.session_id]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _after(cursor: str) -> tuple[float, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        stamp, session_id = json.loads(raw)
        if isinstance(stamp, bool) or not isinstance(stamp, int | float):
            raise TypeError
        if not isinstance(session_id, str):
            raise TypeError
    except (ValueError, TypeError) as exc:
        raise BadCursor("cursor: not a cursor this agent gave (start again without one)") from exc
    return (-float(stamp), session_id)


def _stored(state_dir: Path) -> list[Listed]:
    folder = state_dir / "sessions"
    found: list[Listed] = []
    for log in folder.glob("*.jsonl") if folder.is_dir() else []:
        index = current_index(log)
        if index is None or not index.run_ids or not index.roots:
            continue
        found.append(Listed(log.stem, index.updated_at, list(index.roots), index.title))
    return sorted(found, key=Listed.key)


def list_page(state_dir: Path, cwd: Path | None, cursor: str | None) -> dict[str, Any]:
    """One page of ``session/list`` (blocking: call it off the event loop)."""
    after = _after(cursor) if cursor is not None else None
    sessions = _stored(state_dir)
    if cwd is not None:
        sessions = [s for s in sessions if s.roots[0] == str(cwd)]
    if after is not None:
        sessions = [s for s in sessions if s.key() > after]
    page = sessions[:PAGE]
    answer: dict[str, Any] = {"sessions": [s.to_wire() for s in page]}
    if len(sessions) > PAGE:
        answer["nextCursor"] = _cursor(page[-1])
    return answer


def delete_stored(state_dir: Path, session_id: str) -> None:
    """Remove a session's log, its index and its lock file (what is not there is no
    error). Blocking; the caller holds the session's lock."""
    log = session_log_path(state_dir, session_id)
    for path in (log, index_path(log), lock_path(state_dir, session_id)):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def session_cost(data: SessionData) -> float:
    """What a stored session's runs cost (those of them whose price was known)."""
    last: dict[str, float] = {}  # usage is cumulative within a run: its last counts
    for item in data.events:
        if item.get("kind") != "usage":
            continue
        try:
            event = parse_event(item)
        except ValidationError:
            continue
        if isinstance(event, UsageEvent) and event.cost_usd is not None:
            last[event.run_id] = event.cost_usd
    return sum(last.values())
