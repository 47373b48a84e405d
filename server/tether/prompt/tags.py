"""Where a tag of Tether's frames begins in a text, as a reader would see it.

A reader takes ``</TOOL_OUTPUT >``, ``<\u200b/tool-output>``, ``＜／ｔｏｏｌ＿ｏｕｔｐｕｔ＞`` and
``</tооl_output>`` (Cyrillic ``о``) for the same tag. Two finders, one answer:

- ASCII text (most output: code, logs, HTML) is matched by one linear-time regex (RE2) per set
  of tags: case ignored, spacing and control characters skipped, ``_``, ``-`` or nothing
  between the words.
- Other text is read character by character from each opener (``<`` or a lookalike) that is
  not plainly followed by something else: every reading of each visible character
  (``lookalikes.readings``) walks a trie of the tags' forms, invisible characters skipped.
  A walk stops within a tag's length of visible characters, so the cost stays linear in
  the text, however many invisible characters pad a tag.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from ..text.linear_regex import LinearRegex
from .lookalikes import FOLDED, readings

TOOL_OUTPUT = "tool_output"
ATTACHED_FILE = "attached-file"
EDITOR_SELECTION = "editor-selection"
PROJECT_INSTRUCTIONS = "project-instructions"
MCP_DESCRIPTION = "mcp-description"
FRAME_TAGS: tuple[str, ...] = (
    TOOL_OUTPUT,
    ATTACHED_FILE,
    EDITOR_SELECTION,
    PROJECT_INSTRUCTIONS,
    MCP_DESCRIPTION,
)
"""Every frame's tag: each frame defuses all of them, so none can be forged inside another."""

OPENERS = "<" + "".join(char for char, plain in FOLDED.items() if "<" in plain)
"""The characters a tag can start with: ``<`` and every character that passes for it."""

_Trie = dict[str, "_Trie"]
_END = "\0"
"""The key that marks a whole tag in the trie (no reading holds a NUL)."""
_NOTHING = ("",)
_ASCII_SKIP = r"[\x00-\x20\x7f]*"
"""What a reader does not see in ASCII text: spacing and control characters."""


def _words(tag: str) -> list[str]:
    return re.split(r"[_-]", tag.lower())


@lru_cache(maxsize=16)
def _trie(tags: tuple[str, ...]) -> _Trie:
    """``<tag`` and ``</tag`` of each tag, with ``_``, ``-`` or nothing between its words."""
    root: _Trie = {}
    for tag in tags:
        words = _words(tag)
        for name in {separator.join(words) for separator in ("_", "-", "")}:
            for form in ("<" + name, "</" + name):
                node = root
                for char in form:
                    node = node.setdefault(char, {})
                node[_END] = {}
    return root


@lru_cache(maxsize=16)
def _ascii_regex(tags: tuple[str, ...]) -> LinearRegex:
    """The tags of ``tags`` in ASCII text, as the trie walk reads them there."""
    between = _ASCII_SKIP + "(?:[_-]" + _ASCII_SKIP + ")?"
    names = [
        between.join(_ASCII_SKIP.join(re.escape(c) for c in word) for word in _words(tag))
        for tag in tags
    ]
    return LinearRegex(
        "(?i)<" + _ASCII_SKIP + "(?:/" + _ASCII_SKIP + ")?(?:" + "|".join(names) + ")"
    )


@lru_cache(maxsize=16)
def _candidates(tags: tuple[str, ...]) -> re.Pattern[str]:
    """An opener not plainly followed by something else (``<b>``, ``< 3``, ``</p>``): only
    these can start a tag of ``tags``, however disguised. One character of look-ahead each:
    linear."""
    starts = {tag[0].lower() for tag in tags} | {"/"}
    plain = "".join(
        re.escape(c)
        for c in map(chr, range(0x21, 0x7F))
        if c.lower() not in starts and c.upper() not in starts
    )
    return re.compile(f"[{re.escape(OPENERS)}](?![{plain}])")


def _step(node: _Trie, reading: str) -> _Trie | None:
    for char in reading:
        child = node.get(char)
        if child is None:
            return None
        node = child
    return node


def _tag_at(text: str, start: int, trie: _Trie) -> bool:
    """Whether a tag of the trie, as a reader sees it, begins at ``start``."""
    node: _Trie | None = trie
    nodes: list[_Trie] = []  # where the walk is when a character had several readings
    for index in range(start, len(text)):
        options = readings(text[index])
        if node is not None and len(options) == 1 and len(options[0]) == 1:
            node = node.get(options[0])  # the common case: one reading, one place
            if node is None:
                return False
            if _END in node:
                return True
            continue
        if options == _NOTHING:
            continue
        here = [node] if node is not None else nodes
        moved = [n for n in (_step(at, r) for at in here for r in options) if n is not None]
        if not moved:
            return False
        if any(_END in at for at in moved):
            return True
        node, nodes = (moved[0], []) if len(moved) == 1 else (None, moved)
    return False


def _chosen(tags: str | Iterable[str]) -> tuple[str, ...]:
    return (tags,) if isinstance(tags, str) else tuple(tags)


def walked_starts(text: str, tags: str | Iterable[str] = FRAME_TAGS) -> list[int]:
    """``tag_starts`` by the character walk alone, whatever the text (for tests)."""
    chosen = _chosen(tags)
    trie = _trie(chosen)
    return [m.start() for m in _candidates(chosen).finditer(text) if _tag_at(text, m.start(), trie)]


def tag_starts(text: str, tags: str | Iterable[str] = FRAME_TAGS) -> list[int]:
    """Where a ``<tag`` or ``</tag`` of ``tags`` begins in ``text``, in any disguise."""
    if text.isascii():
        return [start for start, _ in _ascii_regex(_chosen(tags)).spans(text)]
    return walked_starts(text, tags)


def has_tag(text: str, tags: str | Iterable[str] = FRAME_TAGS) -> bool:
    """Whether ``text`` holds a ``<tag`` or ``</tag`` of ``tags`` in any disguise."""
    if text.isascii():
        return _ascii_regex(_chosen(tags)).search(text)
    chosen = _chosen(tags)
    trie = _trie(chosen)
    return any(_tag_at(text, m.start(), trie) for m in _candidates(chosen).finditer(text))
