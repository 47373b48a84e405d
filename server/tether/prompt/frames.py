"""Text from outside, framed for the model: one neutraliser and one quoting for every frame.

Tool output, an @attached file, the editor's selection, AGENTS.md, the editor's problems and
an MCP server's description of a tool all reach the model between a tag of Tether's
(``<attached-file path="…">`` … ``</attached-file>``) that says whose text it is. Two things
keep such a frame whole:

- ``neutralise``: nothing inside can end the frame early, or open a frame of another kind.
  Every ``<tag`` or ``</tag`` of any frame, as a reader would take it in — any case, spacing,
  line breaks, invisible characters, full-width or mathematical forms, Cyrillic or Greek
  lookalikes (``tags``, ``lookalikes``) — has its ``<`` written as a character reference
  (``&lt;``): the text reads the same and ``html.unescape`` gives it back, but it is no tag.
- ``quote``: a name (a file, a folder, a tool) is a JSON string on one line, with line
  breaks, quotes, invisible characters and angle brackets escaped: it cannot add a line to
  the prompt nor close anything.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterable, Mapping

from .lookalikes import invisible, readings
from .tags import (
    ATTACHED_FILE,
    EDITOR_SELECTION,
    FRAME_TAGS,
    MCP_DESCRIPTION,
    OPENERS,
    PROJECT_INSTRUCTIONS,
    TOOL_OUTPUT,
    has_tag,
    tag_starts,
)

__all__ = [
    "ATTACHED_FILE",
    "EDITOR_SELECTION",
    "FRAME_TAGS",
    "MCP_DESCRIPTION",
    "PROJECT_INSTRUCTIONS",
    "TOOL_OUTPUT",
    "framed",
    "has_tag",
    "inline",
    "neutralise",
    "quote",
    "tag_starts",
]


def _reference(char: str) -> str:
    return "&lt;" if char == "<" else f"&#x{ord(char):x};"


def neutralise(text: str, tags: str | Iterable[str] = FRAME_TAGS) -> str:
    """``text`` with every tag of ``tags`` defused: its opener written as a character
    reference, so that the text still reads the same but no disguise makes it a tag."""
    starts = tag_starts(text, tags)
    if not starts:
        return text
    pieces: list[str] = []
    last = 0
    for index in starts:
        pieces.append(text[last:index])
        pieces.append(_reference(text[index]))
        last = index + 1
    pieces.append(text[last:])
    return "".join(pieces)


def _escaped(char: str) -> bool:
    """Whether a name shows ``char`` as an escape: it breaks a line, hides, or opens or
    closes markup."""
    if char in '<>"\\' or char in OPENERS:
        return True
    if char.isascii():
        return not char.isprintable()
    return (
        unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")
        or (invisible(char) and unicodedata.category(char) not in ("Mn", "Me", "Zs"))
        or any(reading in ("<", ">") for reading in readings(char))
    )


def quote(name: str) -> str:
    """``name`` as a JSON string on one line: ``json.loads`` gives it back, and no line
    break, quote, invisible character or angle bracket in it shows as itself."""
    out = ['"']
    for char in name:
        if not _escaped(char):
            out.append(char)
        elif char in '"\\\n\r\t':
            out.append(json.dumps(char)[1:-1])
        elif ord(char) > 0xFFFF:
            out.append(json.dumps(char, ensure_ascii=True)[1:-1])  # a surrogate pair
        else:
            out.append(f"\\u{ord(char):04x}")
    out.append('"')
    return "".join(out)


def inline(text: str) -> str:
    """``text`` (a message that may name files) on one line, escaped as ``quote`` does."""
    return quote(text)[1:-1]


def framed(
    tag: str, attributes: Mapping[str, str], body: str | None, notes: Iterable[str] = ()
) -> str:
    """``body`` between ``<tag name="value" …>`` and ``</tag>``, defused, each value quoted;
    ``notes`` (Tether's own lines, such as "the text was cut") go just before the close.
    A ``None`` body (nothing of the text is shown) leaves no line."""
    head = "".join(f" {name}={quote(value)}" for name, value in attributes.items())
    lines = [f"<{tag}{head}>"] + ([] if body is None else [neutralise(body)])
    return "\n".join([*lines, *notes, f"</{tag}>"])
