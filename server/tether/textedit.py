"""Pure text work for edits: line endings, minimal changes, unified diffs, LSP positions.

Changes and diffs look only at the lines between the texts' common prefix and suffix
(``textspan``), so their cost follows the size of the change, not of the file.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence

from .host import TextChange
from .textspan import changed_span, lines_before, newlines_before, widen

DIFF_CONTEXT = 3
_HUNK = re.compile(r"@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


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
    span = changed_span(old, new)
    base = span.start
    old_lines = old[base : span.old_end].splitlines(keepends=True)
    new_lines = new[base : span.new_end].splitlines(keepends=True)
    offsets = [base]
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
    span = widen(old, changed_span(old, new), len(new), DIFF_CONTEXT)
    lines = difflib.unified_diff(
        old[span.start : span.old_end].splitlines(keepends=True),
        new[span.start : span.new_end].splitlines(keepends=True),
        fromfile=before,
        tofile=f"b/{shown_path}",
    )
    if span.start:
        lines = _shifted(lines, lines_before(old, span.start))
    out = []
    for line in lines:
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line.replace("\r\n", "\n"))
    return "".join(out)


def _shifted(lines: Iterator[str], by: int) -> Iterator[str]:
    """Hunk headers moved down ``by`` lines (the diff was of a part starting there)."""
    for line in lines:
        if line.startswith("@@"):
            match = _HUNK.match(line)
            if match is not None:
                old_start, old_count, new_start, new_count = match.groups()
                line = (
                    f"@@ -{int(old_start) + by}{old_count or ''} "
                    f"+{int(new_start) + by}{new_count or ''} @@{line[match.end() :]}"
                )
        yield line


def position_at(text: str, offset: int, encoding: str = "utf-16") -> tuple[int, int]:
    """The LSP (line, character) of a code-point offset, characters in ``encoding`` units."""
    line = newlines_before(text, offset)
    line_start = text.rfind("\n", 0, offset) + 1
    prefix = text[line_start:offset]
    if encoding == "utf-8":
        return line, len(prefix.encode("utf-8"))
    if encoding == "utf-32":
        return line, len(prefix)
    return line, len(prefix.encode("utf-16-le")) // 2


def range_at(
    text: str, start: int, end: int, encoding: str = "utf-16"
) -> tuple[tuple[int, int], tuple[int, int]]:
    """``position_at`` of ``start`` and of ``end`` (``start <= end``), the text read once."""
    first = position_at(text, start, encoding)
    line = first[0] + text.count("\n", start, end)
    line_start = text.rfind("\n", 0, end) + 1
    prefix = text[line_start:end]
    if encoding == "utf-8":
        return first, (line, len(prefix.encode("utf-8")))
    if encoding == "utf-32":
        return first, (line, len(prefix))
    return first, (line, len(prefix.encode("utf-16-le")) // 2)


def line_numbers_of(text: str, needle: str) -> list[int]:
    """1-based line numbers where each occurrence of ``needle`` starts."""
    numbers = []
    start = text.find(needle)
    while start >= 0 and needle:
        numbers.append(newlines_before(text, start) + 1)
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
