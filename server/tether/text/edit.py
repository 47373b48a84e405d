"""Pure text work for edits: line endings, minimal changes, unified diffs, LSP positions.

Changes and diffs look only at the lines between the texts' common prefix and suffix
(``textspan``), so their cost follows the size of the change, not of the file. Lines and
positions are those of ``textmodel`` (LSP's); its position functions are re-exported here.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence

from ..host import TextChange, apply_changes
from .model import line_ending, line_index, position_at, range_at, split_lines, to_line_ending
from .span import changed_span, widen
from .window import local_pair, shifted

__all__ = [
    "DIFF_CONTEXT",
    "apply_changes",
    "line_ending",
    "line_numbers_of",
    "minimal_changes",
    "minimal_changes_of",
    "occurrences_of",
    "position_at",
    "range_at",
    "similar_lines",
    "to_file_endings",
    "to_line_ending",
    "unified_diff",
    "unified_diff_of",
    "uses_crlf",
]

DIFF_CONTEXT = 3
_HUNK = re.compile(r"@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def uses_crlf(text: str) -> bool:
    """The text's lines end with CRLF (judged by its first line end).

    Kept for callers that know only LF and CRLF; ``line_ending`` also tells a lone ``\\r``.
    """
    return line_ending(text) == "\r\n"


def to_file_endings(text: str, crlf: bool | str) -> str:
    """Model text (LF) in the file's line endings: CRLF when ``crlf`` is true, or the
    ``line_ending`` given (``"\\r\\n"``, ``"\\r"``, ``"\\n"``)."""
    if isinstance(crlf, str):
        return to_line_ending(text, crlf)
    return to_line_ending(text, "\r\n") if crlf else text


def minimal_changes(
    old: str, new: str, known: tuple[int, int] | None = None
) -> tuple[TextChange, ...]:
    """Whole-line changes turning ``old`` into ``new``; untouched lines are left out.

    ``known``: the (prefix, suffix) lengths the caller knows are equal (``changed_span``)."""
    span = changed_span(old, new, known)
    base = span.start
    old_lines = split_lines(old[base : span.old_end], keepends=True)
    new_lines = split_lines(new[base : span.new_end], keepends=True)
    offsets = [base]
    for line in old_lines:
        offsets.append(offsets[-1] + len(line))
    changes: list[TextChange] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            changes.append(TextChange(offsets[i1], offsets[i2], "".join(new_lines[j1:j2])))
    return tuple(changes)


def unified_diff(old: str, new: str, shown_path: str, create: bool = False) -> str:
    """A unified diff with file headers (``--- /dev/null`` for a new file)."""
    return _unified(old, new, shown_path, create, 0)


def unified_diff_of(base: str, changes: Sequence[TextChange], shown_path: str) -> str:
    """``unified_diff(base, apply_changes(base, changes), shown_path)``, computed on the
    lines around ``changes`` (``window.local_pair``), without the whole new text."""
    if not changes:
        return unified_diff(base, base, shown_path)
    at, old, new = local_pair(base, changes, DIFF_CONTEXT + 2)
    return _unified(old, new, shown_path, False, line_index(base, at))


def minimal_changes_of(base: str, changes: Sequence[TextChange]) -> tuple[TextChange, ...]:
    """``minimal_changes(base, apply_changes(base, changes))``, computed on the lines
    around ``changes`` (``window.local_pair``), without the whole new text."""
    if not changes:
        return ()
    at, old, new = local_pair(base, changes, 2)
    known = (changes[0].start - at, at + len(old) - changes[-1].end)
    return shifted(minimal_changes(old, new, known), at)


def _unified(old: str, new: str, shown_path: str, create: bool, first_line: int) -> str:
    """The diff of ``old`` and ``new``, parts of a file starting at line ``first_line``."""
    before = "/dev/null" if create else f"a/{shown_path}"
    span = widen(old, changed_span(old, new), len(new), DIFF_CONTEXT)
    lines = difflib.unified_diff(
        split_lines(old[span.start : span.old_end], keepends=True),
        split_lines(new[span.start : span.new_end], keepends=True),
        fromfile=before,
        tofile=f"b/{shown_path}",
    )
    by = first_line + (line_index(old, span.start) if span.start else 0)
    if by:
        lines = _shifted(lines, by)
    out = []
    for line in lines:  # every line end shown as "\n"
        if line.endswith("\r\n"):
            line = line[:-2] + "\n"
        elif line.endswith("\r"):
            line = line[:-1] + "\n"
        elif not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
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


def line_numbers_of(text: str, needle: str) -> list[int]:
    """1-based line numbers where each occurrence of ``needle`` starts."""
    return [number for number, _ in occurrences_of(text, needle)]


def occurrences_of(text: str, needle: str) -> list[tuple[int, int]]:
    """(1-based line number, offset) where each occurrence of ``needle`` starts."""
    found = []
    start = text.find(needle)
    while start >= 0 and needle:
        found.append((line_index(text, start) + 1, start))
        start = text.find(needle, start + 1)
    return found


def similar_lines(text: str, needle: str, limit: int = 3) -> list[tuple[int, str]]:
    """The lines of ``text`` most like the first non-blank line of ``needle``."""
    target = next((ln.strip() for ln in split_lines(needle) if ln.strip()), "")
    if not target:
        return []
    lines = split_lines(text)
    scored = []
    for number, line in enumerate(lines, 1):
        ratio = difflib.SequenceMatcher(None, target, line.strip()).ratio()
        if ratio >= 0.5:
            scored.append((ratio, number, line))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(number, line) for _, number, line in scored[:limit]]
