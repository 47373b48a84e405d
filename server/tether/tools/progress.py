"""What a running command shows of itself: the time so far and the end of its output.

``run_command`` feeds a ``OutputWatch`` what the command writes, and ``report_progress``
hands a ``ReportProgress`` (the run's ``tool-progress`` events) at most one report every
``PROGRESS_SECONDS``, and only when something a person sees changed: the last line, the
end of the output, or the whole seconds. A command that ends within the first half second
reports nothing. The reports are for people, never for the model.

The text is the command's own, so it is shown as text from outside is (``text.display``):
a carriage return's progress bar reads as a terminal shows it — what was written after the
last ``\\r`` of a line — and every control, bidi or invisible character left is escaped.
"""

from __future__ import annotations

import codecs
import logging
import time
from collections.abc import Callable

import anyio

from ..text.display import shown

__all__ = [
    "LAST_LINE_CHARS",
    "PROGRESS_SECONDS",
    "TAIL_CHARS",
    "TAIL_LINES",
    "OutputWatch",
    "ReportProgress",
    "report_progress",
]

PROGRESS_SECONDS = 0.5
LAST_LINE_CHARS = 200
TAIL_LINES = 20
TAIL_CHARS = 2000
log = logging.getLogger(__name__)

_KEPT = 8192
"""Characters of the output's end kept to find its last lines (a few long lines' worth)."""

ReportProgress = Callable[[int, str, str], None]
"""Told about a running command: milliseconds since it started, its last line, the end of
its output (both shown as text from outside is)."""


def _as_seen(line: str) -> str:
    """A line as a terminal leaves it: what was written after its last carriage return
    that is not blank (a progress bar's last state)."""
    if "\r" not in line:
        return line
    parts = [part for part in line.split("\r") if part.strip()]
    return parts[-1] if parts else ""


class OutputWatch:
    """The end of what a command wrote, decoded as it comes (bounded memory)."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._recent = ""

    def feed(self, data: bytes) -> None:
        """Add bytes as read from the pipe (a character may span two reads)."""
        text = self._decoder.decode(data)
        if text:
            self._recent = (self._recent + text)[-_KEPT:]

    def _lines(self) -> list[str]:
        lines = self._recent.split("\n")
        if len(self._recent) == _KEPT:
            lines = lines[1:] or lines  # the first may be the cut end of a longer line
        return [_as_seen(line).rstrip() for line in lines]

    def last_line(self) -> str:
        """The last line that is not blank, at most ``LAST_LINE_CHARS``, shown."""
        line = next((x for x in reversed(self._lines()) if x.strip()), "")
        if len(line) > LAST_LINE_CHARS:
            line = line[: LAST_LINE_CHARS - 1] + "…"
        return shown(line)

    def tail(self) -> str:
        """The last ``TAIL_LINES`` lines (at most ``TAIL_CHARS``, whole lines when it can),
        shown with their line breaks."""
        lines = self._lines()
        while lines and not lines[-1]:
            lines.pop()
        text = "\n".join(lines[-TAIL_LINES:])
        if len(text) > TAIL_CHARS:
            text = text[-TAIL_CHARS:]
            start = text.find("\n")
            if 0 <= start < len(text) // 2:
                text = text[start + 1 :]
        return shown(text + "\n" if text else "", lines=True)


async def report_progress(watch: OutputWatch, started: float, report: ReportProgress) -> None:
    """Report the command every ``PROGRESS_SECONDS`` while what it shows changed, until
    cancelled (``started``: its ``time.monotonic()`` start). A report that fails stops
    the reports, never the command."""
    sent: tuple[int, str, str] | None = None
    while True:
        await anyio.sleep(PROGRESS_SECONDS)
        elapsed = time.monotonic() - started
        now = (int(elapsed), watch.last_line(), watch.tail())
        if now != sent:
            sent = now
            try:
                report(int(elapsed * 1000), now[1], now[2])
            except Exception:
                log.exception("reporting a running command failed; no more reports")
                return
