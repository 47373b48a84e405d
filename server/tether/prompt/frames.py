"""Text from outside, framed for the model: one neutraliser and one quoting for every frame.

Tool output, an @attached file, the editor's selection, AGENTS.md and the editor's problems
all reach the model between a tag of Tether's (``<attached-file path="…">`` … ``</attached-file>``)
that says whose text it is. Two things keep such a frame whole:

- ``neutralise``: nothing inside can end the frame early, or open a frame of another kind.
  Every ``<tag`` or ``</tag`` of any frame, as a reader would take it in — any case, spacing,
  line breaks, invisible characters, full-width or mathematical forms, Cyrillic or Greek
  lookalikes (``lookalikes.readings``) — has its ``<`` written as a character reference
  (``&lt;``): the text reads the same and ``html.unescape`` gives it back, but it is no tag.
- ``quote``: a name (a file, a folder, a tool) is a JSON string on one line, with line
  breaks, quotes, invisible characters and angle brackets escaped: it cannot add a line to
  the prompt nor close anything.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from functools import lru_cache

from .lookalikes import FOLDED, invisible, readings

TOOL_OUTPUT = "tool_output"
ATTACHED_FILE = "attached-file"
EDITOR_SELECTION = "editor-selection"
PROJECT_INSTRUCTIONS = "project-instructions"
FRAME_TAGS: tuple[str, ...] = (TOOL_OUTPUT, ATTACHED_FILE, EDITOR_SELECTION, PROJECT_INSTRUCTIONS)
"""Every frame's tag: each frame defuses all of them, so none can be forged inside another."""

_OPENERS = "<" + "".join(char for char, plain in FOLDED.items() if "<" in plain)
"""The characters a tag can start with: ``<`` and every character that passes for it."""

_Trie = dict[str, "_Trie"]
_END = "\0"
"""The key that marks a whole tag in the trie (no folded character is NUL)."""


@lru_cache(maxsize=16)
def _trie(tags: tuple[str, ...]) -> _Trie:
    """``<tag`` and ``</tag`` of each tag, with ``_``, ``-`` or nothing between its words."""
    root: _Trie = {}
    for tag in tags:
        words = re.split(r"[_-]", tag.lower())
        for name in {separator.join(words) for separator in ("_", "-", "")}:
            for form in ("<" + name, "</" + name):
                node = root
                for char in form:
                    node = node.setdefault(char, {})
                node[_END] = {}
    return root


@lru_cache(maxsize=16)
def _candidates(tags: tuple[str, ...]) -> re.Pattern[str]:
    """An opener not plainly followed by something else (``<b>``, ``< 3``, ``</p>``): only
    these can start a tag of ``tags``, however disguised."""
    starts = {tag[0].lower() for tag in tags} | {"/"}
    plain = "".join(
        re.escape(c)
        for c in map(chr, range(0x21, 0x7F))
        if c.lower() not in starts and c.upper() not in starts
    )
    return re.compile(f"[{re.escape(_OPENERS)}](?![{plain}])")


def _step(node: _Trie, reading: str) -> _Trie | None:
    for char in reading:
        child = node.get(char)
        if child is None:
            return None
        node = child
    return node


def _tag_at(text: str, start: int, trie: _Trie) -> bool:
    """Whether a tag of the trie, as a reader sees it, begins at ``start``.

    Walks the trie with every reading of each visible character (``lookalikes.readings``):
    the walk stops within the longest tag's length of visible characters, so each character
    is read by a bounded number of walks, however many invisible ones pad a tag.
    """
    nodes = [trie]
    for index in range(start, len(text)):
        options = readings(text[index])
        if options == ("",):
            continue
        moved = [n for n in (_step(node, r) for node in nodes for r in options) if n is not None]
        if any(_END in node for node in moved):
            return True
        if not moved:
            return False
        nodes = moved
    return False


def _tags(tags: str | Iterable[str]) -> tuple[str, ...]:
    return (tags,) if isinstance(tags, str) else tuple(tags)


def tag_starts(text: str, tags: str | Iterable[str] = FRAME_TAGS) -> list[int]:
    """Where a ``<tag`` or ``</tag`` of ``tags`` begins in ``text``, in any disguise."""
    chosen = _tags(tags)
    trie = _trie(chosen)
    return [
        found.start()
        for found in _candidates(chosen).finditer(text)
        if _tag_at(text, found.start(), trie)
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
    if char in '<>"\\' or char in _OPENERS:
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
