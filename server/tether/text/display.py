"""Text from outside as a person is shown it: what would not be seen as itself is escaped.

A name, a title, a command, a file name, a description, a tool's output or the model's text
can hold what a screen does not show as characters: a terminal's escape sequences (erase the
line, move the cursor, set a link or the clipboard: C0, DEL and C1 controls), a carriage
return that writes over the line, line and paragraph separators, bidi overrides and isolates
that show ``exe.txt`` for ``txt.exe``, zero-width and tag characters that hide text.
``shown`` writes each of them as an escape a person can read — ``\\x1b``, ``\\r``,
``\\u202e``, ``\\U000e0041`` — so nothing is dropped and nothing acts.

A zero-width joiner or non-joiner stays between two letters that are not ASCII (emoji
sequences, Persian and Indic words need them) and is escaped next to ASCII, where it only
disguises a word. Escapes are printable ASCII, so ``shown`` of a shown text is the same text.

Every front calls it where a string it did not write is shown: the terminal client's
questions and transcript, ACP's titles, inputs and contents, LSP's approval requests,
messages and transcript lines.
"""

from __future__ import annotations

import re
from typing import Any

_HIDDEN = (
    "\x7f-\x9f"  # DEL and the C1 controls (8-bit CSI, OSC, NEL)
    "\u00ad"  # soft hyphen
    "\u061c"  # Arabic letter mark
    "\u180e"  # Mongolian vowel separator
    "\u200b-\u200f"  # zero-width space, non-joiner, joiner; left-to-right and right-to-left marks
    "\u2028-\u202e"  # line and paragraph separators; bidi embeddings and overrides
    "\u2060-\u206f"  # word joiner, invisible operators, bidi isolates, deprecated formats
    "\ufeff"  # zero-width no-break space
    "\ufff9-\ufffb"  # interlinear annotations
    "\ud800-\udfff"  # lone surrogates (no encoding can write them)
    "\U000e0000-\U000e007f"  # tag characters
)
_ONE_LINE = re.compile(f"[\x00-\x1f{_HIDDEN}]")
_LINES = re.compile(f"\r\n|[\x00-\x08\x0b-\x1f{_HIDDEN}]")
_ASCII_ONE_LINE = re.compile("[\x00-\x1f\x7f]")
_ASCII_LINES = re.compile("\r\n|[\x00-\x08\x0b-\x1f\x7f]")
_JOINERS = "\u200c\u200d"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\r\n": "\n"}
"""Escapes by name; ``\\r\\n`` is found only where lines are kept: it is a line break."""


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _joins(text: str, at: int, pattern: re.Pattern[str]) -> bool:
    """Whether the joiner at ``at`` stands between two visible letters that are not ASCII."""
    if at == 0 or at + 1 >= len(text):
        return False
    before, after = text[at - 1], text[at + 1]
    return not (
        before.isascii()
        or after.isascii()
        or pattern.match(before) is not None
        or pattern.match(after) is not None
    )


def shown(text: str, *, lines: bool = False) -> str:
    """``text`` as a person may be shown it: control characters, carriage returns, line
    separators, bidi controls, zero-width and tag characters escaped (``\\x1b``, ``\\r``,
    ``\\u202e``). One line (a title, a name), or, with ``lines``, lines of their own (a
    command, an output: ``\\n``, ``\\r\\n`` and tabs kept as line breaks and tabs, each
    line escaped alike)."""
    if text.isascii():
        found = (_ASCII_LINES if lines else _ASCII_ONE_LINE).search(text)
        if found is None:
            return text
        pattern = _LINES if lines else _ONE_LINE
        return pattern.sub(lambda m: _escape(m.group()), text)
    pattern = _LINES if lines else _ONE_LINE
    if pattern.search(text) is None:
        return text

    def escape(match: re.Match[str]) -> str:
        char = match.group()
        if char in _JOINERS and _joins(text, match.start(), pattern):
            return char
        return _escape(char)

    return pattern.sub(escape, text)


def shown_value(value: Any) -> Any:
    """A JSON value (a tool call's arguments) as a person may be shown it: every string in
    it, keys included, through ``shown`` (line breaks kept)."""
    if isinstance(value, str):
        return shown(value, lines=True)
    if isinstance(value, dict):
        return {shown(str(k), lines=True): shown_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shown_value(item) for item in value]
    return value
