"""The chat's ``/diff``: what the session changed, as one unified diff of each file from
before the session's first edit of it to now (read from the session log and the disk)."""

from __future__ import annotations

import difflib
from pathlib import Path

from ..session.records import EditRecord
from ..session.store import load


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def session_diff(state_dir: Path, session_id: str, root: Path) -> tuple[str, list[str]]:
    """The diff of the files the session edited (its runs not undone), and a note for
    each file that cannot be shown (changed since, or gone)."""
    data = load(state_dir, session_id)
    if data is None:
        return "", []
    by_path: dict[str, list[EditRecord]] = {}
    for edit in data.edits:
        if edit.confirmed and edit.run_id not in data.undone:
            by_path.setdefault(edit.path, []).append(edit)
    pieces: list[str] = []
    notes: list[str] = []
    for name, edits in by_path.items():
        path = Path(name)
        shown = _shown(path, root)
        try:
            now: str | None = path.read_text(encoding="utf-8", errors="surrogateescape")
        except FileNotFoundError:
            now = None
        except OSError as exc:
            notes.append(f"{shown}: cannot be read ({exc.strerror or exc})")
            continue
        text = now
        for edit in reversed(edits):  # back through the session's edits to its start
            if text is None or not edit.is_after(text):
                notes.append(f"{shown}: changed since the session edited it, not shown")
                break
            text = edit.text_before(text)
        else:
            before = "" if edits[0].created else (text or "")
            pieces += difflib.unified_diff(
                before.splitlines(keepends=True),
                (now or "").splitlines(keepends=True),
                "/dev/null" if edits[0].created else f"a/{shown}",
                f"b/{shown}",
            )
    return "".join(piece if piece.endswith("\n") else piece + "\n" for piece in pieces), notes
