"""Terminal plumbing for the CLI: an output whose reader may leave, a cancellable line
reader, and Ctrl-C handling that does not block on a prompt."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import termios
from collections.abc import Callable, Iterator
from typing import Any, Protocol, TextIO


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


async def readable(fd: int) -> None:
    """Until ``fd`` has something to read; on the event loop, so a cancel ends it at once."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await ready
    finally:
        loop.remove_reader(fd)


async def read_line(
    prompt: str, out: TextOut, fd: int | None = None, *, hidden: bool = False
) -> str | None:
    """One line typed at the terminal (``fd``, else standard input); None at end of input
    (Ctrl-D). What is typed shows as it is typed, in line mode, even inside a turn that
    keeps the terminal quiet (``unechoed``); the terminal is as it was after the line.

    It waits on the event loop rather than in a thread, so a cancel (Ctrl-C) ends it at once.
    ``hidden`` (a password): nothing typed shows.
    """
    fd = sys.stdin.fileno() if fd is None else fd
    with _echoed(fd, hidden):
        out.write(prompt)
        out.flush()
        await readable(fd)
        data = os.read(fd, 4096)  # a terminal in line mode hands over one line
    if hidden:
        out.write("\n")  # the Enter typed did not show either
        out.flush()
    if not data:
        return None
    return data.decode(errors="replace").rstrip("\r\n")


@contextlib.contextmanager
def _echoed(fd: int, hidden: bool = False) -> Iterator[None]:
    """While a line is typed at ``fd`` (a terminal): in line mode, each key echoed (none,
    ``hidden``); then the terminal as it was (quiet again inside a turn). Nothing changes
    for a pipe."""
    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        yield
        return
    typing = termios.tcgetattr(fd)
    typing[3] |= termios.ICANON | termios.ECHO | termios.ECHOE | termios.ECHOK  # lflag
    if hidden:
        typing[3] &= ~(termios.ECHO | termios.ECHOE | termios.ECHOK)
    termios.tcsetattr(fd, termios.TCSANOW, typing)
    try:
        yield
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


END_OF_INPUT = "\x04"
"""What ``read_key`` returns for Ctrl-D (and for an input that has ended)."""


async def read_key(prompt: str, out: TextOut, fd: int | None = None) -> str:
    """One key pressed at the terminal (``fd``, else standard input), no Enter needed:
    the terminal leaves line mode for the read (Ctrl-C still interrupts) and keys typed
    before the question was shown are dropped, so none answers it unseen. Ctrl-D, or an
    input that has ended, is ``END_OF_INPUT``."""
    fd = sys.stdin.fileno() if fd is None else fd
    saved: list[Any] | None = None
    with contextlib.suppress(termios.error):  # not a terminal (a pipe): read what comes
        saved = termios.tcgetattr(fd)
    if saved is not None:
        keys = termios.tcgetattr(fd)
        keys[3] &= ~(termios.ICANON | termios.ECHO)  # lflag; ISIG stays: ^C is SIGINT
        keys[6] = list(keys[6])
        keys[6][termios.VMIN] = 1
        keys[6][termios.VTIME] = 0
        termios.tcsetattr(fd, termios.TCSANOW, keys)
        termios.tcflush(fd, termios.TCIFLUSH)
    try:
        out.write(prompt)
        out.flush()
        await readable(fd)
        data = os.read(fd, 64)  # a key, or an escape sequence (an arrow) or a paste: its first
    finally:
        if saved is not None:
            termios.tcsetattr(fd, termios.TCSANOW, saved)
    text = data.decode(errors="replace")
    if not text:
        return END_OF_INPUT
    if text.startswith("\x1b"):
        return "\x1b"  # an arrow or a function key: "another key"
    return text[0]


HANDED: int | None = None
"""In a run the daemon forked, the terminal its front handed over with the run (the front's
controlling terminal, when its stdin was not one): set in that run's own process only
(``daemon/server.py``), which has no controlling terminal of its own; None elsewhere."""


def open_terminal() -> tuple[int, bool] | None:
    """The terminal to ask the user at: standard input when it is one, else the process's
    controlling terminal (``/dev/tty``, as git and ssh do for a piped input; in a daemon's
    run, the one its front handed over, ``HANDED``); as its descriptor and whether the
    caller opened it (and must close it). None: no terminal."""
    with contextlib.suppress(OSError, ValueError):
        if sys.stdin.isatty():
            return sys.stdin.fileno(), False
    if HANDED is not None:
        return HANDED, False
    try:
        fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY)
    except OSError:
        return None
    if not os.isatty(fd):
        os.close(fd)
        return None
    return fd, True


@contextlib.contextmanager
def unechoed(stream: TextIO) -> Iterator[None]:
    """While a turn streams: keys typed at ``stream`` (a terminal) are not echoed into its
    output and Ctrl-C prints no ``^C`` (it still interrupts: ``ISIG`` stays); what was
    typed waits for the next prompt as it was typed. Out of line mode, so that the line
    discipline keeps each key: in it, a Ctrl-D is an end of file stored as a NUL that the
    next prompt would read as Ctrl-Space. Nothing changes for a stream that is no terminal."""
    try:
        fd = stream.fileno()
        saved = termios.tcgetattr(fd)
    except (OSError, ValueError, termios.error):
        yield
        return
    quiet = termios.tcgetattr(fd)
    quiet[3] &= ~(termios.ECHO | termios.ECHOCTL | termios.ICANON)  # lflag
    quiet[6] = list(quiet[6])
    quiet[6][termios.VMIN] = 1
    quiet[6][termios.VTIME] = 0
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


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
