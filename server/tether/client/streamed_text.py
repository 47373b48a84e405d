"""Assistant text streamed raw to a terminal, then taken back so that it can be shown once,
rendered: how many terminal rows it filled (the terminal wraps long lines), and whether
those rows are all still on the screen to be erased."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from rich.cells import get_character_cell_size

TAB = 8
ERASE_BELOW = "\x1b[J"

TerminalSize = Callable[[], tuple[int, int] | None]
"""The terminal's (columns, rows) now; None when it does not say."""


def stdout_size() -> tuple[int, int] | None:
    """The size of the terminal on standard output (None when unknown, e.g. 0×0)."""
    try:
        size = os.get_terminal_size(sys.stdout.fileno())
    except (OSError, ValueError):
        return None
    if size.columns <= 0 or size.lines <= 0:
        return None
    return size.columns, size.lines


def rows_above_cursor(text: str, columns: int) -> int | None:
    """How many rows above the cursor ``text`` began, written from the start of a row on a
    terminal ``columns`` wide; None when it holds what moves the cursor unpredictably
    (escape sequences, carriage returns, backspaces: from the model, not ours to guess)."""
    row = column = 0
    for char in text:
        if char == "\n":
            row, column = row + 1, 0
            continue
        if char == "\t":
            column = max(column, min(columns - 1, (column // TAB + 1) * TAB))  # never wraps
            continue
        if char < " " or "\x7f" <= char < "\xa0":
            return None
        width = get_character_cell_size(char)
        if column + width > columns:  # a VT100 wraps before the character that does not fit
            row, column = row + 1, 0
        column += width
    return row


class StreamedText:
    """The raw text of one assistant message as it went to the terminal."""

    def __init__(self, from_row_start: bool, size: tuple[int, int] | None = None) -> None:
        self.text = ""
        self.erasable = from_row_start
        """False once something else was written among it or it did not start a row."""
        self.size = size
        """The terminal's size when it began (a resize rewraps the rows: not countable)."""

    def add(self, piece: str) -> None:
        """A piece as written."""
        self.text += piece

    def eraser(self, size: tuple[int, int] | None) -> str | None:
        """What moves the cursor back to where the text began and clears everything below;
        None when some of it has scrolled off the screen (or the size is unknown), where
        no terminal can take it back."""
        if not self.erasable or size is None or self.size not in (None, size):
            return None
        columns, lines = size
        up = rows_above_cursor(self.text, columns)
        if up is None or up >= lines:
            return None
        return "\r" + (f"\x1b[{up}A" if up else "") + ERASE_BELOW
