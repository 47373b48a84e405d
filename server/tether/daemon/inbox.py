"""The daemon's connections while their request arrives, read side by side.

The daemon's one loop reads every connection without blocking, as its bytes come: a request
is whole once its 4-byte length and that many bytes have arrived, with the file descriptors
sent with its first bytes. The whole request must arrive within ``MESSAGE_SECONDS`` of the
connection (a deadline per message, not per read): a silent or trickling client is refused
then, and no other connection waits for it meanwhile. A refused connection is told why and
what it still sends is read and dropped (so that closing does not reset the connection
before the client reads the reason), for at most ``DRAIN_SECONDS`` in all.
"""

from __future__ import annotations

import contextlib
import os
import socket
from typing import Any

from . import wire
from .wire import DaemonError

MESSAGE_SECONDS = 5.0
"""How long a connection has to send its whole request."""
DRAIN_SECONDS = 0.5
"""How long a refused client's remaining input is read before the connection is closed."""
DRAIN_BYTES = 2 * wire.MAX_FRAME_BYTES
"""The most of a refused client's input that is read."""
SEND_SECONDS = 1.0
"""How long an answer may take to be handed to the kernel (a few hundred bytes: at once,
unless the client has filled what it receives and stopped reading)."""


class Incoming:
    """A connection whose request is still arriving."""

    def __init__(self, conn: socket.socket, now: float) -> None:
        conn.setblocking(False)
        self.conn = conn
        self.deadline = now + MESSAGE_SECONDS
        self.header = bytearray()
        self.body = bytearray()
        self.size: int | None = None
        self.fds: list[int] = []
        """The file descriptors that came with the request, ours to close or hand on."""

    def read(self) -> dict[str, Any] | None:
        """Read what has arrived: the request once it is whole, else None. ``DaemonError``
        (or ``OSError``) for a bad or cut one, its descriptors closed."""
        try:
            while self.size is None:
                want = wire.HEADER.size - len(self.header)
                data, fds, flags, _ = socket.recv_fds(self.conn, want, wire.MAX_DESCRIPTORS)
                self.fds += fds
                if flags & socket.MSG_CTRUNC:
                    raise DaemonError("too many file descriptors")
                if not data:
                    raise DaemonError("the connection ended before a message")
                self.header += data
                if len(self.header) == wire.HEADER.size:
                    (size,) = wire.HEADER.unpack(self.header)
                    if size > wire.MAX_FRAME_BYTES:
                        raise DaemonError(
                            f"a message of {size} bytes is over {wire.MAX_FRAME_BYTES}"
                        )
                    self.size = size
            while len(self.body) < self.size:
                chunk = self.conn.recv(min(self.size - len(self.body), 1 << 16))
                if not chunk:
                    raise DaemonError("the connection ended inside a message")
                self.body += chunk
            message = wire.decode_body(bytes(self.body))
        except BlockingIOError:
            return None
        except BaseException:
            self.close_fds()
            raise
        self.conn.setblocking(True)
        return message

    def late(self) -> str:
        """Why a request that did not arrive by its deadline is refused."""
        got = len(self.header) + len(self.body)
        return f"no whole message within {MESSAGE_SECONDS:g} s ({got} bytes came)"

    def close_fds(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds = []


def answer(conn: socket.socket, message: dict[str, Any]) -> None:
    """Send ``message`` (blocking at most ``SEND_SECONDS``)."""
    conn.settimeout(SEND_SECONDS)
    wire.send(conn, message)


class Refused:
    """A refused connection: told why, its input read and dropped until it ends, up to
    ``DRAIN_BYTES`` or until ``DRAIN_SECONDS`` after the refusal."""

    def __init__(self, conn: socket.socket, why: str, now: float) -> None:
        self.conn = conn
        self.deadline = now + DRAIN_SECONDS
        self.left = DRAIN_BYTES
        with contextlib.suppress(OSError, DaemonError):
            answer(conn, {"error": why[:500]})
            conn.shutdown(socket.SHUT_WR)
        conn.setblocking(False)

    def read(self) -> bool:
        """Drop what has arrived; True once the connection can be closed."""
        try:
            while self.left > 0:
                chunk = self.conn.recv(min(self.left, 1 << 16))
                if not chunk:
                    return True
                self.left -= len(chunk)
        except BlockingIOError:
            return False
        except OSError:
            return True
        return True
