"""A session's files on disk, and the small index kept next to its log.

``<id>.jsonl`` is the log (the truth); ``<id>.index.json`` summarises it (times, first and
last prompt, run ids, last outcome, counts) so listing sessions and finding a run never
read whole logs. The index says how many bytes of the log it covers and what the last of
them were: a log that grew since is read from there on, one cut short or rewritten in place
is read again, and a missing index (an older state dir) is rebuilt from the log.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from pathlib import Path
from typing import get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic.alias_generators import to_camel

from tether_protocol import Outcome

from ..writes.private import write_new_private

TITLE_CHARS = 80
TAIL_BYTES = 64
"""The last bytes of the log an index covers, kept to notice a log rewritten in place."""


def session_log_path(state_dir: Path, session_id: str) -> Path:
    """Where a session's log lives (the id is made file-name safe)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)
    return state_dir / "sessions" / f"{safe}.jsonl"


def index_path(log: Path) -> Path:
    """Where the index of the log ``log`` lives."""
    return log.with_name(log.stem + ".index.json")


def _shorten(prompt: str) -> str:
    flat = " ".join(prompt.split())
    return flat if len(flat) <= TITLE_CHARS else flat[: TITLE_CHARS - 1] + "…"


def session_title(prompt: str) -> str:
    """A session's title: its first prompt on one line, shortened."""
    return _shorten(prompt)


class SessionIndex(BaseModel):
    """What listing sessions and finding runs need to know of one log."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    version: int = 1
    created_at: float
    """When the session's first line was written (seconds since the epoch)."""
    updated_at: float
    """When its last line was written."""
    title: str = ""
    """The first prompt, shortened."""
    last_prompt: str = ""
    run_ids: list[str] = Field(default_factory=list)
    roots: list[str] = Field(default_factory=list)
    """The folders the latest run worked in (``workspace`` records)."""
    last_outcome: Outcome | None = None
    events: int = 0
    records: int = 0
    log_bytes: int = 0
    """How much of the log this index has read."""
    log_tail: str = ""
    """The last bytes of those (hex)."""

    def observe(self, line: bytes) -> tuple[str, str] | None:
        """Count one complete log line (without its newline); ``(kind, run id)`` for a
        ``run-started`` or ``run-finished`` event."""
        if line.startswith(b'{"record":"workspace"'):  # as Tether writes it: first key
            self.records += 1
            with contextlib.suppress(ValueError):
                roots = json.loads(line).get("roots")
                if isinstance(roots, list) and all(isinstance(r, str) for r in roots):
                    self.roots = roots
            return None
        if b'"run-started"' not in line and b'"run-finished"' not in line:
            if b'"record":' in line:  # as a key only: inside a string the quote is escaped
                self.records += 1
            elif line.strip():
                self.events += 1
            return None
        try:
            item = json.loads(line)
        except ValueError:
            return None
        if not isinstance(item, dict):
            return None
        if "record" in item:
            self.records += 1
            return None
        self.events += 1
        kind, run_id = item.get("kind"), item.get("runId")
        if not isinstance(run_id, str):
            return None
        if kind == "run-started":
            prompt = item.get("prompt")
            prompt = prompt if isinstance(prompt, str) else ""
            self.title = self.title or _shorten(prompt)
            self.last_prompt = _shorten(prompt)
            if run_id not in self.run_ids:
                self.run_ids.append(run_id)
            return kind, run_id
        if kind == "run-finished":
            outcome = item.get("outcome")
            if outcome in get_args(Outcome):
                self.last_outcome = outcome
            return kind, run_id
        return None

    def covered(self, size: int, written: bytes) -> None:
        """The log is now ``size`` bytes long, ``written`` being its newest bytes."""
        tail = bytes.fromhex(self.log_tail) + written[-TAIL_BYTES:]
        self.log_tail = tail[-TAIL_BYTES:].hex()
        self.log_bytes = size


def _first_time(log: Path) -> float:
    """The best guess of a log's creation time when no index recorded it (older state
    dirs): its birth time where the system keeps one, else the older of ctime and mtime."""
    status = log.stat()
    born = getattr(status, "st_birthtime", None)
    return float(born) if born else min(status.st_ctime, status.st_mtime)


def read_index(log: Path) -> SessionIndex | None:
    """The index stored next to ``log``, as it is (maybe stale); None if none is readable."""
    try:
        return SessionIndex.model_validate_json(index_path(log).read_bytes())
    except (OSError, ValidationError, ValueError):
        return None


def write_index(log: Path, index: SessionIndex) -> None:
    """Replace the index of ``log`` atomically (a reader never sees half of one); a new
    index file is the user's alone (0600), as the log is."""
    target = index_path(log)
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
    write_new_private(temporary, index.model_dump_json(by_alias=True, exclude_none=True).encode())
    os.replace(temporary, target)


def catch_up(log: Path, known: SessionIndex | None) -> tuple[SessionIndex, bool]:
    """``known`` brought up to date with ``log``: only what was appended since is read (all
    of it when ``known`` is None, or the log was cut short or rewritten); whether it changed.

    Raises ``OSError`` when the log cannot be read.
    """
    with log.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        index = known
        if index is not None:
            tail = bytes.fromhex(index.log_tail)
            if size < index.log_bytes:
                index = None
            elif tail:
                handle.seek(index.log_bytes - len(tail))
                if handle.read(len(tail)) != tail:
                    index = None  # rewritten in place (repaired, replaced)
        if index is None:
            created = known.created_at if known is not None else _first_time(log)
            index = SessionIndex(created_at=created, updated_at=log.stat().st_mtime)
        elif size == index.log_bytes:
            return index, index is not known
        else:
            index = index.model_copy(deep=True)
        handle.seek(index.log_bytes)
        chunk = handle.read(size - index.log_bytes)
    complete = chunk.rfind(b"\n") + 1  # a line being written is read next time
    for line in chunk[:complete].split(b"\n"):
        index.observe(line)
    if complete:
        index.covered(index.log_bytes + complete, chunk[:complete])
        index.updated_at = max(index.updated_at, log.stat().st_mtime)
    return index, True


def current_index(log: Path) -> SessionIndex | None:
    """The up-to-date index of ``log`` (stored again when it had to be brought up to date,
    if the state dir can be written); None when the log cannot be read."""
    stored = read_index(log)
    try:
        index, changed = catch_up(log, stored)
    except OSError:
        return None
    if changed:
        # a read-only state dir still lists; it just reads the log again next time
        with contextlib.suppress(OSError):
            write_index(log, index)
    return index
