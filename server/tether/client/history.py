"""The terminal's memory of its sessions: which folder each one ran in.

The server's session index knows prompts, runs and outcomes but not the folder, which
``tether run --continue`` and ``tether undo`` need; the CLI keeps that map itself in
``<state dir>/terminal-folders.json`` (a lost update only forgets one folder).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..session.index import current_index, session_log_path
from ..session.store import list_sessions, load
from ..writes.disk import Changed, Refused, own_folder, update_confined

FOLDERS_FILE = "terminal-folders.json"


def folders(state_dir: Path) -> dict[str, str]:
    """Session id → the folder it ran in, as far as the terminal knows."""
    try:
        return _parsed((state_dir / FOLDERS_FILE).read_bytes())
    except OSError:
        return {}


def _parsed(data: bytes | None) -> dict[str, str]:
    try:
        table = json.loads(data or b"{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in table.items()} if isinstance(table, dict) else {}


def remember(state_dir: Path, session_id: str, folder: Path) -> None:
    """Note that ``session_id`` ran in ``folder`` (best effort: the log is what matters),
    through the confined writer: two terminals finishing at once both keep their line."""

    def noted(data: bytes | None) -> bytes | None:
        known = _parsed(data)
        if known.get(session_id) == str(folder):
            return None
        known[session_id] = str(folder)
        return (json.dumps(known, indent=1) + "\n").encode()

    with contextlib.suppress(OSError, Refused, Changed):
        root = own_folder(state_dir)
        update_confined(root, root / FOLDERS_FILE, noted, private=True)


@dataclass(frozen=True, slots=True)
class SessionRow:
    """One line of ``tether sessions``."""

    session_id: str
    folder: str
    updated: str
    runs: int
    outcome: str
    last_prompt: str


def sessions(state_dir: Path, folder: Path | None = None, limit: int = 20) -> list[SessionRow]:
    """Stored sessions, newest first; only those of ``folder`` when given."""
    where = folders(state_dir)
    rows = []
    for info in list_sessions(state_dir):
        ran_in = where.get(info.session_id, "")
        if folder is not None and ran_in != str(folder):
            continue
        index = current_index(session_log_path(state_dir, info.session_id))
        rows.append(
            SessionRow(
                session_id=info.session_id,
                folder=ran_in,
                updated=info.updated_at.replace("T", " ").removesuffix("+00:00"),
                runs=info.runs,
                outcome=info.last_outcome or "-",
                last_prompt=(index.last_prompt if index else "") or info.title,
            )
        )
        if len(rows) >= limit:
            break
    return rows


def table(rows: list[SessionRow]) -> str:
    """``rows`` as an aligned text table."""
    head = ("SESSION", "UPDATED (UTC)", "RUNS", "OUTCOME", "FOLDER", "LAST PROMPT")
    cells = [head] + [
        (r.session_id, r.updated, str(r.runs), r.outcome, _home(r.folder), _cut(r.last_prompt))
        for r in rows
    ]
    widths = [max(len(row[i]) for row in cells) for i in range(len(head) - 1)]
    return "\n".join(
        "  ".join(cell.ljust(w) for cell, w in zip(row[:-1], widths, strict=True)) + "  " + row[-1]
        for row in cells
    )


def _home(folder: str) -> str:
    home = str(Path.home())
    return "~" + folder[len(home) :] if folder.startswith(home + os.sep) else folder or "?"


def _cut(text: str, width: int = 50) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def last_edit_run(state_dir: Path, session_id: str) -> str | None:
    """The latest run of a session that edited files and is not undone yet."""
    data = load(state_dir, session_id)
    if data is None:
        return None
    edited = [e.run_id for e in data.edits if e.run_id not in data.undone]
    return edited[-1] if edited else None
