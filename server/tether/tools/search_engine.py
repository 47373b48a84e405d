"""What ``search`` runs on: the line matcher, ripgrep's pattern, and bounded workers.

* ``LineMatcher``: a pattern matched line by line in linear time (RE2);
* ``rg_pattern``: the same pattern for ripgrep, which only preselects files;
* ``run_killable`` runs ``rg`` in its own process group, killed on cancel;
  ``run_stoppable`` runs a walk in a worker thread a cancelled run leaves behind at once.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.abc
import anyio.to_thread

from ..text.linear_regex import LinearRegex, LinearRegexError
from ..workspace.folders import split_lines

__all__ = ["LineMatcher", "rg_pattern", "run_killable", "run_stoppable"]

T = TypeVar("T")


class LineMatcher:
    """A search pattern, matched line by line in linear time (RE2).

    Matching each line costs a call (~1 µs) per line, 20 times Python's ``re``; so the whole
    text is searched in multi-line mode instead, and only the line where each match starts
    is checked on its own, the search going on from the next line. Every line with a match
    of its own is reached that way, since that match is also one of the whole text. Lines
    are checked one by one where a whole-text match could miss a line's: ``\\A``/``\\z``
    (line ends only when matched per line), ``(?-m)``, and CRLF text (``$`` would not match
    before ``\\r``).
    """

    def __init__(self, pattern: str) -> None:
        """``LinearRegexError`` when RE2 refuses ``pattern``."""
        self.pattern = pattern
        self.regex = LinearRegex(pattern)
        self.whole: LinearRegex | None = None
        if not _WHOLE_TEXT_UNSAFE.search(pattern):
            with contextlib.suppress(LinearRegexError):
                self.whole = LinearRegex("(?m)" + pattern)

    def lines(self, text: str, stop: threading.Event | None = None) -> list[tuple[int, str]]:
        """The (1-based number, text) of each matching line; fewer once ``stop`` is set."""
        if not text:
            return []
        if self.whole is None or "\r" in text:
            return self._each_line(text, stop)
        try:  # without the final newline: no line starts after it (``^$`` would match there)
            data = text.removesuffix("\n").encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates (a buffer's JSON escapes)
            return self._each_line(text, stop)
        found: list[tuple[int, str]] = []
        pos = counted = 0
        number = 1
        while pos <= len(data) and (start := self.whole.start_in(data, pos)) is not None:
            number += data.count(b"\n", counted, start)
            counted = start
            line_start = data.rfind(b"\n", 0, start) + 1
            line_end = data.find(b"\n", start)
            line_end = len(data) if line_end < 0 else line_end
            line = data[line_start:line_end].decode("utf-8")
            if self.regex.search(line):
                found.append((number, line))
            pos = line_end + 1
            if stop is not None and stop.is_set():
                break
        return found

    def _each_line(self, text: str, stop: threading.Event | None) -> list[tuple[int, str]]:
        found: list[tuple[int, str]] = []
        for n, line in enumerate(split_lines(text), 1):
            if self.regex.search(line):
                found.append((n, line))
            if n % 4096 == 0 and stop is not None and stop.is_set():
                break
        return found


_WHOLE_TEXT_UNSAFE = re.compile(r"\\[Az]|\(\?[a-zA-Z]*-[a-zA-Z]*m")

# RE2's ASCII Perl classes, spelled so Rust reads them alike (its own are Unicode).
_ASCII_CLASSES = {
    "w": "[0-9A-Za-z_]",
    "W": "[^0-9A-Za-z_]",
    "d": "[0-9]",
    "D": "[^0-9]",
    "s": "[\\t\\n\\f\\r ]",
    "S": "[^\\t\\n\\f\\r ]",
}


def rg_pattern(pattern: str) -> str | None:
    """``pattern`` for ripgrep, matching (at least) the lines RE2 matches; None if unsure.

    Rust's ``\\w``, ``\\d``, ``\\s`` and ``\\b`` are Unicode-aware, RE2's ASCII: they are
    spelled out (``(?-u:\\b)``). A ``[`` inside a class, or ``&&``, ``--``, ``~~`` there,
    are set operations to Rust and literals to RE2: the Python walk decides those.
    """
    out: list[str] = []
    in_class = False
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            escaped = pattern[i + 1]
            if escaped in _ASCII_CLASSES:
                out.append(_ASCII_CLASSES[escaped])
            elif escaped in "bB" and not in_class:
                out.append(f"(?-u:\\{escaped})")
            else:
                out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if pattern.startswith("[:", i) and (close := pattern.find(":]", i + 2)) > 0:
                out.append(pattern[i : close + 2])
                i = close + 2
                continue
            if c == "[" or pattern[i : i + 2] in ("&&", "--", "~~"):
                return None
            in_class = c != "]"
        elif c == "[":
            in_class = True
            out.append(c)
            i += 1
            # A leading "]" (after an optional "^") is a member, not the end.
            if pattern.startswith("^", i):
                out.append("^")
                i += 1
            if pattern.startswith("]", i):
                out.append("]")
                i += 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


async def run_stoppable(work: Callable[[threading.Event], T]) -> T:
    """``work(stop)`` in a worker thread, without holding up cancellation.

    When the caller is cancelled (agent/cancel, timeoutSeconds) it is answered at once; the
    thread is abandoned and ``stop`` is set, which ``work`` checks per file or entry.
    """
    stop = threading.Event()
    try:
        return await anyio.to_thread.run_sync(work, stop, abandon_on_cancel=True)
    finally:
        stop.set()


async def run_killable(cmd: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    """Run ``cmd`` to the end: (exit code, stdout, stderr); killed, group and all, if the
    caller is cancelled first."""
    # Shielded: cancelled half-way, asyncio kills only the process it started, not its group.
    with anyio.CancelScope(shield=True):
        process = await anyio.open_process(
            cmd,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: one killpg reaches all of it
        )
    try:
        out, err = bytearray(), bytearray()
        async with anyio.create_task_group() as tg:
            assert process.stdout is not None and process.stderr is not None  # PIPE
            tg.start_soon(_drain, process.stdout, out)
            tg.start_soon(_drain, process.stderr, err)
            returncode = await process.wait()
        return returncode, bytes(out), bytes(err)
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        with anyio.CancelScope(shield=True):
            await process.aclose()


async def _drain(stream: anyio.abc.ByteReceiveStream, into: bytearray) -> None:
    async for chunk in stream:
        into += chunk
