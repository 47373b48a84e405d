"""Terminal plumbing for the CLI: an output whose reader may leave, a cancellable line
reader, and Ctrl-C handling that does not block on a prompt."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Protocol, TextIO


class TextOut(Protocol):
    """What the renderer and the approver write to."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...

    def isatty(self) -> bool: ...


class GuardedOutput:
    """A text stream whose reader may go away (``| head -1``).

    The first broken pipe calls ``on_closed`` once; later writes are dropped quietly.
    """

    def __init__(self, stream: TextIO, on_closed: Callable[[], None] | None = None) -> None:
        self._stream = stream
        self._on_closed = on_closed
        self.reader_gone = False

    def write(self, text: str, /) -> int:
        """Write ``text``, or drop it once the reader has gone."""
        if not self.reader_gone:
            try:
                self._stream.write(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def flush(self) -> None:
        """Flush, noticing a reader that has gone."""
        if not self.reader_gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._gone()

    def isatty(self) -> bool:
        """Whether the stream is a terminal (for colours)."""
        return self._stream.isatty()

    def _gone(self) -> None:
        self.reader_gone = True
        silence(self._stream)
        if self._on_closed is not None:
            self._on_closed()


def silence(stream: TextIO) -> None:
    """Point ``stream``'s descriptor at /dev/null so the exit flush cannot fail again."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)


async def read_line(prompt: str, out: TextOut) -> str | None:
    """One line typed at the terminal; None at end of input (Ctrl-D).

    It waits on the event loop rather than in a thread, so a cancel (Ctrl-C) ends it at once.
    """
    out.write(prompt)
    out.flush()
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()
    fd = sys.stdin.fileno()

    def readable() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await ready
    finally:
        loop.remove_reader(fd)
    data = os.read(fd, 4096)  # a terminal in line mode hands over one line
    if not data:
        return None
    return data.decode(errors="replace").rstrip("\r\n")


@contextlib.contextmanager
def on_interrupt(handler: Callable[[], None]) -> Iterator[None]:
    """Call ``handler`` on each Ctrl-C (SIGINT) instead of raising ``KeyboardInterrupt``."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGINT, handler)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)
