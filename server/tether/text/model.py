"""Lines, line ends and positions exactly as LSP 3.17 defines them: the one text model.

A line ends at ``\\n``, ``\\r\\n`` or a lone ``\\r``, nowhere else (``str.splitlines`` also
cuts at ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028`` and ``\\u2029``; editors do
not). A position is (line, character), characters counted in the negotiated encoding's code
units (UTF-8, UTF-16 or UTF-32); a character past the end of its line means the end of the
line, a line past the end the end of the document, and a character inside a multi-unit
character the end of that character. An offset between the ``\\r`` and ``\\n`` of a ``\\r\\n``
is taken as the offset of the ``\\r`` (the end of its line).

Every place that cuts lines or converts positions goes through here: the document store,
the edit tools, diffs, ``read_file``'s numbering and the client library. Texts without a
lone ``\\r`` (nearly all, CRLF files too) take ``str.count``/``find`` of ``\\n`` alone, at
``memchr`` speed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, Protocol

Encoding = Literal["utf-8", "utf-16", "utf-32"]
LINE_ENDS = ("\r\n", "\n", "\r")
NON_LSP_BREAKS = "\v\f\x1c\x1d\x1e\x85\u2028\u2029"
"""What ``str.splitlines`` breaks on besides the LSP line ends; none of them ends a line."""

_LINES = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+")
_LONE_CR = re.compile(r"\r(?!\n)")
_BLOCK = 1 << 16
_MAX_BLOCK = 1 << 20
_REMEMBERED = 1 << 16  # texts at least this long have their "\r" check remembered


def encoding_name(encoding: object) -> Encoding:
    """``utf-8``, ``utf-16`` or ``utf-32`` for a negotiated encoding (enum, string or None).

    ``str()`` of lsprotocol's ``PositionEncodingKind`` is ``PositionEncodingKind.Utf8``,
    not ``utf-8``, so the value is read instead.
    """
    value = getattr(encoding, "value", encoding)
    if value == "utf-8":
        return "utf-8"
    return "utf-32" if value == "utf-32" else "utf-16"


_cr_known: list[tuple[str, bool]] = []


def _has_lone_cr(text: str) -> bool:
    """Whether a ``\\r`` of ``text`` ends a line by itself (remembered for the last two long
    texts). Without one, every line end holds a ``\\n`` and counting those is enough."""
    if len(text) < _REMEMBERED:
        return "\r" in text and _LONE_CR.search(text) is not None
    for known, answer in _cr_known:
        if known is text:
            return answer
    # memchr first (nearly every text stops there); the search takes 3 ms on 10 MB of
    # CRLF where counting "\r" and "\r\n" takes 13
    answer = "\r" in text and _LONE_CR.search(text) is not None
    _cr_known[:] = [(text, answer), *_cr_known[:1]]
    return answer


def _ends_between(text: str, start: int, stop: int) -> int:
    """How many line ends complete in ``text[start:stop]`` (a ``\\r\\n`` cut by ``start``
    completes at its ``\\n``; one cut by ``stop`` does not complete)."""
    if start >= stop:
        return 0
    count = text.count("\n", start, stop)
    if _has_lone_cr(text):
        count += text.count("\r", start, stop) - text.count("\r\n", start, stop)
        if text[stop - 1] == "\r" and text.startswith("\n", stop):
            count -= 1
    return count


_known: list[tuple[str, int, int]] = []
"""(text, offset, line ends before it) of the last two texts counted."""


def _recalled(text: str) -> tuple[int, int] | None:
    for known_text, known, count in _known[:]:  # a copy: other threads count too
        if known_text is text:
            return known, count
    return None


def _noted(text: str, offset: int, count: int) -> None:
    if len(text) < _REMEMBERED:  # cheap to count again: a diff's window must not push
        return  # the long text being edited out of the two remembered
    _known[:] = [(text, offset, count), *(k for k in _known[:2] if k[0] is not text)][:2]


class Replacement(Protocol):
    """``before[start:end]`` replaced by ``new_text`` (``host.TextChange``)."""

    @property
    def start(self) -> int: ...
    @property
    def end(self) -> int: ...
    @property
    def new_text(self) -> str: ...


def derived(before: str, changes: Sequence[Replacement], after: str) -> None:
    """``after`` is ``before`` with ``changes`` (in order, not overlapping) applied: what is
    remembered of ``before`` (no lone ``\r``; the line of an offset) is carried over to
    ``after``, so that the next edit of a 10 MB buffer does not count its lines from 0."""
    if len(after) < _REMEMBERED or not changes:
        return
    cr = next((answer for known, answer in _cr_known if known is before), None)
    if cr is not False or any("\r" in c.new_text for c in changes):
        return
    if any(c.start > 0 and before[c.start - 1] == "\r" for c in changes):
        return  # a "\r" before a change might lose its "\n"
    # No lone "\r" before, none made: every line end of ``after`` holds a "\n".
    _cr_known[:] = [(after, False), *(k for k in _cr_known[:1] if k[0] is not after)]
    point = _recalled(before)
    if point is None:
        return
    offset, count = point
    first, last = changes[0], changes[-1]
    if offset <= first.start:  # the same place in both texts
        _noted(after, offset, count)
    elif offset >= last.end:  # shifted by the changes
        shift = sum(len(c.new_text) - (c.end - c.start) for c in changes)
        lines = sum(c.new_text.count("\n") - before.count("\n", c.start, c.end) for c in changes)
        _noted(after, offset + shift, count + lines)


def line_index(text: str, offset: int) -> int:
    """The 0-based line holding ``offset``: the line ends completed before it.

    Counted on from the last answer for the same text (the last two texts are kept): an
    edit asks for the line of the same place several times, and on a 10 MB text each count
    from 0 costs milliseconds; the lines of its small diff window are counted between.
    """
    offset = max(0, min(offset, len(text)))
    known, count = _recalled(text) or (0, 0)
    if offset >= known:
        count += _ends_between(text, known, offset)
    elif offset >= known - offset:
        count -= _ends_between(text, offset, known)
    else:
        count = _ends_between(text, 0, offset)
    _noted(text, offset, count)
    return count


def line_start_at(text: str, offset: int) -> int:
    """The offset where the line holding ``offset`` starts."""
    start = text.rfind("\n", 0, offset) + 1
    if _has_lone_cr(text):
        cr = text.rfind("\r", start, offset)
        if cr >= 0 and cr == offset - 1 and text.startswith("\n", offset):
            cr = text.rfind("\r", start, cr)  # half of the "\r\n" ending this very line
        start = max(start, cr + 1)
    return start


def content_end_at(text: str, offset: int) -> int:
    """The offset where the line holding ``offset`` ends, before its line end."""
    if 0 < offset < len(text) and text[offset] == "\n" and text[offset - 1] == "\r":
        return offset - 1  # inside the "\r\n" ending this line
    newline = text.find("\n", offset)
    if newline < 0:
        newline = end = len(text)
    else:
        end = newline - 1 if newline > offset and text[newline - 1] == "\r" else newline
    if _has_lone_cr(text):
        cr = text.find("\r", offset, end)
        if cr >= 0:
            end = cr
    return end


def line_end_at(text: str, offset: int) -> int:
    """The offset after the line end of the line holding ``offset`` (or ``len(text)``)."""
    end = content_end_at(text, offset)
    if end == len(text):
        return end
    return end + 2 if text.startswith("\r\n", end) else end + 1


def _after_ends(text: str, start: int, wanted: int) -> int:
    """The offset just after the ``wanted``-th line end from ``start``; ``len(text)`` when
    there are fewer. Whole blocks are counted, then the last one is halved."""
    size, step = len(text), _BLOCK
    while True:
        stop = min(start + step, size)
        found = _ends_between(text, start, stop)
        if found >= wanted:
            break
        if stop >= size:
            return size
        wanted -= found
        start, step = stop, min(step * 2, _MAX_BLOCK)
    while stop - start > 1:  # the wanted end completes in (start, stop]
        middle = (start + stop) // 2
        found = _ends_between(text, start, middle)
        if found >= wanted:
            stop = middle
        else:
            wanted -= found
            start = middle
    return stop


def line_start(text: str, line: int) -> int:
    """The offset where ``line`` (0-based) starts; ``len(text)`` for a line past the end."""
    if line <= 0:
        return 0
    recalled = _recalled(text)
    if recalled is not None and recalled[1] <= line:
        known, count = recalled
        if count == line:
            return line_start_at(text, known)
        start = _after_ends(text, known, line - count)
    else:
        start = _after_ends(text, 0, line)
    if start < len(text):
        _noted(text, start, line)
    return start


def content(line: str) -> str:
    """A line without its line end."""
    if line.endswith("\n"):
        return line[:-2] if line.endswith("\r\n") else line[:-1]
    return line[:-1] if line.endswith("\r") else line


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """``text`` cut into lines at each LSP line end; a final line end opens no line.

    ``str.splitlines`` (in C) when the text holds none of the other breaks it knows.
    """
    if not any(char in text for char in NON_LSP_BREAKS):
        return text.splitlines(keepends)
    if "\r" not in text:
        lines = text.split("\n")
        last = lines.pop()
        if keepends:
            lines = [line + "\n" for line in lines]
        if last:
            lines.append(last)
        return lines
    found: list[str] = _LINES.findall(text)
    return found if keepends else [content(line) for line in found]


def line_count(text: str) -> int:
    """``len(split_lines(text))``: the lines holding text, without splitting."""
    ends = line_index(text, len(text))
    return ends + 1 if text and text[-1] not in "\r\n" else ends


def line_slice(text: str, start: int, stop: int, total: int | None = None) -> list[str]:
    """``split_lines(text)[start:stop]``, cutting only those lines.

    A window at the top of a large buffer (``read_file``'s first 2,000 lines of 200,000)
    then costs what it shows. ``total`` is ``line_count(text)`` when the caller has it.
    """
    stop = min(stop, line_count(text) if total is None else total)
    if start >= stop:
        return []
    return split_lines(text[line_start(text, start) : line_start(text, stop)])


def units(text: str, encoding: str) -> int:
    """The length of ``text`` in ``encoding`` code units."""
    if encoding == "utf-32" or text.isascii():
        return len(text)
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if max(text) <= "\uffff":
        return len(text)
    return len(text) + sum(1 for char in text if char > "\uffff")


def column_index(line: str, column: int, encoding: str) -> int:
    """The code-point index in ``line`` (without its line end) of a column given in
    ``encoding`` units; clamped to the line, rounded up inside a multi-unit character."""
    if column <= 0:
        return 0
    if encoding == "utf-32" or line.isascii():
        return min(column, len(line))
    if encoding == "utf-16" and max(line) <= "\uffff":
        return min(column, len(line))
    counted = 0
    for index, char in enumerate(line):
        if counted >= column:
            return index
        code = ord(char)
        if encoding == "utf-8":
            counted += 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
        else:
            counted += 2 if code > 0xFFFF else 1
    return len(line)


def position_at(text: str, offset: int, encoding: str = "utf-16") -> tuple[int, int]:
    """The LSP (line, character) of a code-point offset, characters in ``encoding`` units."""
    offset = max(0, min(offset, len(text)))
    if 0 < offset < len(text) and text[offset] == "\n" and text[offset - 1] == "\r":
        offset -= 1  # inside a "\r\n": the end of its line
    line = line_index(text, offset)
    return line, units(text[line_start_at(text, offset) : offset], encoding)


def range_at(
    text: str, start: int, end: int, encoding: str = "utf-16"
) -> tuple[tuple[int, int], tuple[int, int]]:
    """``position_at`` of ``start`` and of ``end`` (the second counted on from the first)."""
    return position_at(text, start, encoding), position_at(text, end, encoding)


def offset_at(text: str, line: int, character: int, encoding: str = "utf-16") -> int:
    """The code-point offset of an LSP position (clamped as LSP says)."""
    start = line_start(text, line)
    if start == len(text):
        return start
    return start + column_index(text[start : content_end_at(text, start)], character, encoding)


def line_ending(text: str) -> str:
    """The text's line-end style, judged by its first line end (``\\n`` when it has none)."""
    newline = text.find("\n")
    cr = text.find("\r", 0, len(text) if newline < 0 else newline)
    if cr < 0:
        return "\n"
    return "\r\n" if cr + 1 == newline else "\r"


def to_line_ending(text: str, ending: str) -> str:
    """``text`` (the model's, lines ending in ``\\n``) with its line ends made ``ending``.

    Text for a ``\\n`` file is left as written.
    """
    if ending == "\n" or ("\n" not in text and "\r" not in text):
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", ending)
