"""An independent reading of LSP 3.17's text rules, for tests to check the server against.

Written from the specification's words, character by character, sharing no code with
``tether.text.model``:

* "the following end of line sequences: '\\n', '\\r\\n' and '\\r'" end a line;
* "Position in a document expressed as zero-based line and zero-based character offset",
  the character counted in the negotiated encoding's code units (UTF-8 bytes, UTF-16 code
  units, UTF-32 code points);
* "If the character value is greater than the line length it defaults back to the line
  length"; a line past the last one is taken as the end of the document (what editors do).

A character position inside a multi-unit character is taken as the end of that character,
and an offset between the ``\\r`` and ``\\n`` of a ``\\r\\n`` as the end of its line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ENCODINGS = ("utf-8", "utf-16", "utf-32")


@dataclass(frozen=True)
class Line:
    """One LSP line: ``text[start:content_end]`` is its text, ``text[content_end:end]`` its
    line end (empty for the last line)."""

    start: int
    content_end: int
    end: int


def lines_of(text: str) -> list[Line]:
    """Every LSP line of ``text``, scanned one character at a time (at least one line)."""
    lines: list[Line] = []
    start = i = 0
    while i < len(text):
        char = text[i]
        if char == "\n":
            lines.append(Line(start, i, i + 1))
            start = i = i + 1
        elif char == "\r":
            size = 2 if i + 1 < len(text) and text[i + 1] == "\n" else 1
            lines.append(Line(start, i, i + size))
            start = i = i + size
        else:
            i += 1
    lines.append(Line(start, len(text), len(text)))
    return lines


def split(text: str, keepends: bool) -> list[str]:
    """The lines holding text (the empty line after a final line end is not one)."""
    lines = lines_of(text)
    if lines[-1].start == len(text):
        lines.pop()
    return [text[ln.start : ln.end if keepends else ln.content_end] for ln in lines]


def char_units(char: str, encoding: str) -> int:
    """How many code units one character takes in ``encoding``."""
    if encoding == "utf-8":
        code = ord(char)
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    if encoding == "utf-16":
        return 2 if ord(char) > 0xFFFF else 1
    return 1


def position(text: str, offset: int, encoding: str) -> tuple[int, int]:
    """The (line, character) of a code-point offset."""
    assert 0 <= offset <= len(text)
    lines = lines_of(text)
    number = 0
    while number < len(lines) - 1 and offset >= lines[number].end:
        number += 1
    line = lines[number]
    stop = min(offset, line.content_end)
    return number, sum(char_units(c, encoding) for c in text[line.start : stop])


def offset(text: str, line: int, character: int, encoding: str) -> int:
    """The code-point offset of a (line, character) position."""
    lines = lines_of(text)
    if line >= len(lines):
        return len(text)
    found = lines[line]
    counted, at = 0, found.start
    while at < found.content_end and counted < character:
        counted += char_units(text[at], encoding)
        at += 1
    return at


def apply_edits(text: str, edits: list[dict[str, Any]], encoding: str = "utf-16") -> str:
    """``text`` with LSP ``TextEdit``s (ranges in the original text) applied."""
    spans = []
    for edit in edits:
        start, end = edit["range"]["start"], edit["range"]["end"]
        spans.append(
            (
                offset(text, start["line"], start["character"], encoding),
                offset(text, end["line"], end["character"], encoding),
                edit["newText"],
            )
        )
    for begin, finish, new in sorted(spans, reverse=True):
        text = text[:begin] + new + text[finish:]
    return text
