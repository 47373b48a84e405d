"""Regexes matched in linear time (RE2), so a hostile pattern can never stall the server.

Python's ``re`` backtracks: ``^(\\w+\\s?)*$`` on ``"a" * 34 + "!"`` runs for hours while
holding the GIL, which freezes every thread of the process, the event loop included. RE2
(``google-re2``) matches in time linear in the text, releases the GIL while it matches, and
refuses the constructs that need backtracking (look-around, backreferences): those get a
clear error instead of a hang. Its syntax is the one ripgrep's Rust regex follows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import re2

__all__ = ["LinearRegex", "LinearRegexError", "backtracking_free"]


class LinearRegexError(ValueError):
    """A pattern RE2 cannot compile; ``str()`` says why, with a hint for unsupported syntax."""


def _options(*, capture: bool = False) -> Any:
    options = re2.Options()
    options.log_errors = False  # errors are raised to the caller; RE2 would print them too
    options.never_capture = not capture
    return options


_OPTIONS = _options()

# RE2's own words for what it refuses, and what to tell a model about them.
_HINTS = (
    ("(?=", "look-ahead is not supported"),
    ("(?!", "look-ahead is not supported"),
    ("(?<=", "look-behind is not supported"),
    ("(?<!", "look-behind is not supported"),
    ("\\1", "backreferences are not supported"),
    ("\\Z", "use \\z for the end of the line"),
    ("++", "possessive quantifiers are not supported"),
    ("*+", "possessive quantifiers are not supported"),
)


class LinearRegex:
    """A compiled RE2 regex with the two questions the tools ask: ``search`` and ``fullmatch``.

    Text with lone surrogates (undecodable file names, JSON-escaped buffers) cannot be UTF-8
    encoded; each such character is matched as U+FFFD, one character as in Python.
    """

    __slots__ = ("_regex", "pattern")

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        try:
            self._regex = re2.compile(pattern, _OPTIONS)
        except re2.error as exc:
            raise LinearRegexError(_describe(pattern, exc)) from None
        except UnicodeEncodeError:
            raise LinearRegexError("the pattern contains an unpaired surrogate") from None

    def search(self, text: str) -> bool:
        """Whether the regex matches anywhere in ``text``."""
        try:
            return self._regex.search(text) is not None
        except UnicodeEncodeError:
            return self._regex.search(_replace_surrogates(text)) is not None

    def spans(self, text: str) -> Iterator[tuple[int, int]]:
        """Where each match in ``text`` starts and ends (character offsets), left to right;
        lazy, so a caller that stops early pays only for the matches it took."""
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = _replace_surrogates(text)  # one character for one: the offsets hold
        for found in self._regex.finditer(text):
            yield int(found.start()), int(found.end())

    def start_in(self, data: bytes, pos: int) -> int | None:
        """Where the leftmost match in UTF-8 ``data`` at or after byte ``pos`` starts, or None.

        ``pos`` is read as the start of the text (for ``^``, ``\\A`` and ``\\b``).
        """
        found = self._regex.search(data, pos)
        return None if found is None else int(found.start())

    def fullmatch(self, text: str) -> bool:
        """Whether the regex matches all of ``text``."""
        try:
            return self._regex.fullmatch(text) is not None
        except UnicodeEncodeError:
            return self._regex.fullmatch(_replace_surrogates(text)) is not None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _replace_surrogates(text: str) -> str:
    return _SURROGATE.sub("\ufffd", text)


def _describe(pattern: str, exc: BaseException) -> str:
    raw = exc.args[0] if exc.args else exc
    message = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    for marker, hint in _HINTS:
        if marker in pattern and hint not in message:
            return f"{message} ({hint}: the regex syntax is RE2's, as in ripgrep)"
    if re.search(r"\\[1-9]", pattern):
        return f"{message} (backreferences are not supported: the syntax is RE2's)"
    return message


def backtracking_free(regex: str) -> bool:
    """Whether Python's ``re`` matches ``regex`` in at most quadratic time: one ``*`` at most
    and no ``|``. For the regexes ``wildmatch_regex`` writes (escapes, classes, ``*``, ``?``
    and groups), more stars or alternatives are what can multiply the backtracking."""
    stars = alternatives = 0
    i = 0
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            i += 2
            continue
        stars += c == "*"
        alternatives += c == "|"
        i += 1
    return stars <= 1 and alternatives == 0
