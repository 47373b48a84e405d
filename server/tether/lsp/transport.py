"""Stdio transport: frames read on a daemon thread, messages handled on the event loop.

The framing itself (both directions) is ``tether.framing``.

pygls' own ``start_io`` reads stdin from a thread pool that blocks interpreter exit and
answers neither malformed JSON nor invalid messages; this loop does both, and it ends
cleanly on end of input or SIGTERM so that runs and their children can be stopped.

Output is batched: the frames sent during one turn of the event loop go out in one write
(a streamed reply is thousands of small notifications), never held longer than a few
milliseconds even while a burst keeps the loop busy.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import BinaryIO

from pygls.protocol import JsonRPCProtocol

from ..framing import (
    DEFAULT_MAX_MESSAGE_BYTES,
    FrameReader,
    Oversized,
    UnframeableStream,
    frame_head,
)
from .dispatch import answer_oversized, dispatch

__all__ = ["StdoutWriter", "serve"]

log = logging.getLogger(__name__)

BACKLOG_BYTES = 16 * 1024 * 1024
"""Bodies read ahead of the event loop; past this the reader waits (the pipe pushes back)."""

FLUSH_BYTES = 256 * 1024
"""Write at once when this much is waiting."""
FLUSH_SECONDS = 0.004
"""Write at once when the oldest waiting frame is this old (a burst that never yields)."""


class StdoutWriter:
    """The writer every message goes through: bodies framed, in order, batched.

    pygls hands it bodies (``include_headers=False``) so that the frame headers are written
    in one place (``tether.framing``); header and body are queued apart, never copied
    together.

    Frames written on the event loop's thread wait for the end of the loop's current turn
    (``call_soon``), unless ``FLUSH_BYTES`` are waiting or the oldest has waited
    ``FLUSH_SECONDS``; frames from other threads are handed to the loop the same way.
    Without a loop every frame is written at once.
    """

    def __init__(self, stream: BinaryIO, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self._stream = stream
        self._loop = loop
        self._loop_thread = threading.get_ident()
        self._lock = threading.Lock()
        self._frames: list[bytes] = []
        self._size = 0
        self._since = 0.0
        self._scheduled = False
        self._broken = False

    def write(self, body: bytes) -> None:
        """Queue one message body, framed."""
        head = frame_head(len(body))
        with self._lock:
            if not self._frames:
                self._since = time.monotonic()
            self._frames += (head, body)
            self._size += len(head) + len(body)
            if (
                self._loop is None
                or self._size >= FLUSH_BYTES
                or time.monotonic() - self._since >= FLUSH_SECONDS
            ):
                self._write_out()
            elif not self._scheduled:
                self._scheduled = True
                try:
                    if threading.get_ident() == self._loop_thread:
                        self._loop.call_soon(self.flush)
                    else:
                        self._loop.call_soon_threadsafe(self.flush)
                except RuntimeError:  # the loop is closed: nothing will flush later
                    self._write_out()

    def flush(self) -> None:
        """Write out everything queued."""
        with self._lock:
            self._write_out()

    def _write_out(self) -> None:
        self._scheduled = False
        if not self._frames:
            return
        data = b"".join(self._frames)
        self._frames.clear()
        self._size = 0
        if self._broken:
            return
        try:
            self._stream.write(data)
            self._stream.flush()
        except (OSError, ValueError) as exc:  # the client is gone; end of input will follow
            self._broken = True
            log.debug("cannot write to the client: %s", exc)

    def close(self) -> None:
        """Write out what is queued, then close the stream."""
        self.flush()
        with self._lock:
            self._broken = True
        with contextlib.suppress(OSError):
            self._stream.close()


class Backlog:
    """Bytes read but not yet handled: the reader thread waits while there are too many."""

    def __init__(self, limit: int = BACKLOG_BYTES) -> None:
        self._limit = limit
        self._size = 0
        self._changed = threading.Condition()

    def reserve(self, size: int) -> None:
        """Wait until ``size`` more bytes fit (one message always fits an empty backlog)."""
        with self._changed:
            while self._size and self._size + size > self._limit:
                self._changed.wait()
            self._size += size

    def release(self, size: int) -> None:
        """The loop is done with ``size`` bytes."""
        with self._changed:
            self._size -= size
            self._changed.notify()


async def serve(
    protocol: JsonRPCProtocol,
    stdin: BinaryIO,
    stdout: BinaryIO,
    on_close: Callable[[], Awaitable[None]],
    max_message_bytes: Callable[[], int] | int = DEFAULT_MAX_MESSAGE_BYTES,
    reader: FrameReader | None = None,
    first: Sequence[bytearray | Oversized | UnframeableStream | None] = (),
) -> int:
    """Serve until end of input or SIGTERM, then await ``on_close`` (stop runs, flush logs).

    ``reader`` and ``first``: the reader the lean start read with and what it read (handled
    before anything else; ``lsp.lean``). Returns the exit status: 0, or 2 when the input
    stopped carrying LSP frames at all.
    """
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[bytearray | Oversized | UnframeableStream | None] = asyncio.Queue()
    backlog = Backlog()
    cap = max_message_bytes if callable(max_message_bytes) else (lambda: max_message_bytes)
    frames = reader if reader is not None else FrameReader(stdin.fileno(), cap)
    ended = False
    for item in first:
        if isinstance(item, bytearray):
            backlog.reserve(len(item))
        inbox.put_nowait(item)
        ended = ended or item is None or isinstance(item, UnframeableStream)

    def pump() -> None:
        while True:
            item: bytearray | Oversized | UnframeableStream | None
            try:
                item = frames.read_frame()
            except UnframeableStream as exc:
                item = exc
            except (OSError, ValueError):
                item = None
            if isinstance(item, bytearray):
                backlog.reserve(len(item))
            loop.call_soon_threadsafe(inbox.put_nowait, item)
            if item is None or isinstance(item, UnframeableStream):
                return

    def start_pump() -> None:
        threading.Thread(target=pump, name="tether-stdin", daemon=True).start()

    # What the lean start read is handled before anything more is read: the settings of
    # its ``initialize`` (the message cap) apply to the messages after it.
    unread = len(first)
    if not ended and not unread:
        start_pump()
    writer = StdoutWriter(stdout, loop)
    protocol.set_writer(writer, include_headers=False)
    # Editors send SIGTERM on a forced stop: end as at end of input, with the cleanup.
    with contextlib.suppress(NotImplementedError, RuntimeError):  # no signals here
        loop.add_signal_handler(signal.SIGTERM, inbox.put_nowait, None)
    status = 0

    def handle(item: bytearray | Oversized | UnframeableStream) -> bool:
        """Handle one item; False: stop serving."""
        nonlocal status
        if isinstance(item, UnframeableStream):
            log.error("the input is not LSP-framed (%s): exiting so the editor can restart", item)
            status = 2
            return False
        if isinstance(item, Oversized):
            answer_oversized(protocol, item, cap())
            return True
        size = len(item)
        try:
            dispatch(protocol, item)
        finally:
            del item  # a large body is not kept alive while waiting for the next
            backlog.release(size)
        return True

    try:
        while (item := await inbox.get()) is not None:
            going_on = handle(item)
            del item
            if unread:
                unread -= 1
                if not unread and not ended:
                    start_pump()
            if not going_on:
                break
    finally:
        await on_close()
        writer.flush()
    return status
