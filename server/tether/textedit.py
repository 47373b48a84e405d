"""Pure text work for edits: line endings, minimal changes, unified diffs, LSP positions."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from .host import TextChange


def uses_crlf(text: str) -> bool:
    """The text's lines end with CRLF (judged by its first line ending)."""
    first = text.find("\n")
    return first > 0 and text[first - 1] == "\r"


def to_file_endings(text: str, crlf: bool) -> str:
    """Model text (LF) in the file's line endings."""
    if not crlf:
        return text
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def minimal_changes(old: str, new: str) -> tuple[TextChange, ...]:
    """Whole-line changes turning ``old`` into ``new``; untouched lines are left out."""
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    offsets = [0]
    for line in old_lines:
        offsets.append(offsets[-1] + len(line))
    changes: list[TextChange] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            changes.append(TextChange(offsets[i1], offsets[i2], "".join(new_lines[j1:j2])))
    return tuple(changes)


def apply_changes(text: str, changes: Sequence[TextChange]) -> str:
    """``text`` with ``changes`` (in document order, not overlapping) applied."""
    out: list[str] = []
    cursor = 0
    for change in changes:
        out.append(text[cursor : change.start])
        out.append(change.new_text)
        cursor = change.end
    out.append(text[cursor:])
    return "".join(out)


def unified_diff(old: str, new: str, shown_path: str, create: bool = False) -> str:
    """A unified diff with file headers (``--- /dev/null`` for a new file)."""
    before = "/dev/null" if create else f"a/{shown_path}"
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=before,
        tofile=f"b/{shown_path}",
    )
    out = []
    for line in lines:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line.replace("\r\n", "\n"))
    return "".join(out)


def position_at(text: str, offset: int, encoding: str = "utf-16") -> tuple[int, int]:
    """The LSP (line, character) of a code-point offset, characters in ``encoding`` units."""
    line = text.count("\n", 0, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    prefix = text[line_start:offset]
    if encoding == "utf-8":
        return line, len(prefix.encode("utf-8"))
    if encoding == "utf-32":
        return line, len(prefix)
    return line, len(prefix.encode("utf-16-le")) // 2


def line_numbers_of(text: str, needle: str) -> list[int]:
    """1-based line numbers where each occurrence of ``needle`` starts."""
    numbers = []
    start = text.find(needle)
    while start >= 0 and needle:
        numbers.append(text.count("\n", 0, start) + 1)
        start = text.find(needle, start + 1)
    return numbers


def similar_lines(text: str, needle: str, limit: int = 3) -> list[tuple[int, str]]:
    """The lines of ``text`` most like the first non-blank line of ``needle``."""
    target = next((ln.strip() for ln in needle.splitlines() if ln.strip()), "")
    if not target:
        return []
    lines = text.splitlines()
    scored = []
    for number, line in enumerate(lines, 1):
        ratio = difflib.SequenceMatcher(None, target, line.strip()).ratio()
        if ratio >= 0.5:
            scored.append((ratio, number, line))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(number, line) for _, number, line in scored[:limit]]
