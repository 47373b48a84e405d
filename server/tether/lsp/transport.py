"""Stdio transport: LSP framing read on a daemon thread, messages handled on the event loop.

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
import json
import logging
import os
import re
import signal
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException
from pygls.protocol import JsonRPCProtocol

log = logging.getLogger(__name__)

_CONTENT_LENGTH = re.compile(rb"^content-length:\s*(\d+)\s*$", re.IGNORECASE)

FLUSH_BYTES = 256 * 1024
"""Write at once when this much is waiting."""
FLUSH_SECONDS = 0.004
"""Write at once when the oldest waiting frame is this old (a burst that never yields)."""


def frame(body: bytes) -> bytes:
    """An LSP frame around a JSON body (the headers pygls writes)."""
    return (
        b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
        % len(body)
        + body
    )


class FrameReader:
    """Reads LSP frames straight from a file descriptor.

    Raw ``os.read`` rather than a buffered stream: a daemon thread blocked inside a
    ``BufferedReader`` holds its lock, and the interpreter aborts when it exits meanwhile.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._buffer = bytearray()

    def _fill(self) -> bool:
        chunk = os.read(self._fd, 65536)
        self._buffer += chunk
        return bool(chunk)

    def _readline(self) -> bytes | None:
        while (end := self._buffer.find(b"\n")) < 0:
            if not self._fill():
                return None
        line = bytes(self._buffer[: end + 1])
        del self._buffer[: end + 1]
        return line

    def read_frame(self) -> bytes | None:
        """One message body, or None at end of input."""
        length: int | None = None
        while True:
            line = self._readline()
            if line is None:
                return None
            if line in (b"\r\n", b"\n"):
                if length is None:
                    continue  # a stray blank line: keep looking for headers
                break
            match = _CONTENT_LENGTH.match(line.strip())
            if match:
                length = int(match.group(1))
        while len(self._buffer) < length:
            if not self._fill():
                return None
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        return body


class StdoutWriter:
    """The writer every message goes through: whole frames, in order, batched.

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

    def write(self, data: bytes) -> None:
        """Queue one whole frame."""
        with self._lock:
            if not self._frames:
                self._since = time.monotonic()
            self._frames.append(data)
            self._size += len(data)
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
        data = self._frames[0] if len(self._frames) == 1 else b"".join(self._frames)
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


def _error_response(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _reject(protocol: JsonRPCProtocol, body: bytes, exc: Exception) -> None:
    """Answer a message that could not be decoded, as JSON-RPC says."""
    try:
        raw = json.loads(body)
    except (ValueError, UnicodeDecodeError) as parse_error:
        protocol._send_data(_error_response(None, -32700, f"Parse error: {parse_error}"))
        return
    if not isinstance(raw, dict) or "method" not in raw and "id" not in raw:
        protocol._send_data(_error_response(None, -32600, "Invalid Request: not a JSON-RPC object"))
        return
    if "id" not in raw or "method" not in raw:
        log.warning("dropping a malformed notification or response: %s", exc)
        return
    if isinstance(exc, JsonRpcException):
        code, text = exc.code, f"invalid params for {raw['method']}: {exc.message or exc}"
    else:
        code, text = -32600, f"Invalid Request: {exc}"
    protocol._send_data(_error_response(raw["id"], code, text))


async def serve(
    protocol: JsonRPCProtocol,
    stdin: BinaryIO,
    stdout: BinaryIO,
    on_close: Callable[[], Awaitable[None]],
) -> None:
    """Serve until end of input or SIGTERM, then await ``on_close`` (stop runs, flush logs)."""
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[bytes | None] = asyncio.Queue()

    reader = FrameReader(stdin.fileno())

    def pump() -> None:
        while True:
            try:
                body = reader.read_frame()
            except (OSError, ValueError):
                body = None
            loop.call_soon_threadsafe(inbox.put_nowait, body)
            if body is None:
                return

    threading.Thread(target=pump, name="tether-stdin", daemon=True).start()
    writer = StdoutWriter(stdout, loop)
    protocol.set_writer(writer)
    # Editors send SIGTERM on a forced stop: end as at end of input, with the cleanup.
    with contextlib.suppress(NotImplementedError, RuntimeError):  # no signals here
        loop.add_signal_handler(signal.SIGTERM, inbox.put_nowait, None)
    try:
        while (body := await inbox.get()) is not None:
            try:
                message = json.loads(body, object_hook=protocol.structure_message)
                if not hasattr(message, "jsonrpc"):
                    raise ValueError("not a JSON-RPC message")
            except Exception as exc:
                _reject(protocol, body, exc)
                continue
            try:
                protocol.handle_message(message)
            except Exception:
                log.exception("failed to handle a message")
    finally:
        await on_close()
        writer.flush()
