"""LSP frames read by the server from a file descriptor, robust to clients that get the framing
wrong.

Policy (see docs/protocol.md, "Transport limits"):

* A body larger than the message cap is skipped without being buffered and reported as
  ``Oversized`` (the serve loop answers it when an id can be recovered cheaply).
* Bytes that are not a header block (a body sent without headers, the rest of a body whose
  ``Content-Length`` was too short, a negative or missing length) are skipped up to the next
  ``Content-Length:`` header, wherever it starts in a line: the stream resynchronises.
* A body whose ``Content-Length`` was too long is cut where the next frame's header starts
  inside it (a raw ``Content-Length: N`` line cannot occur in JSON), and when the client
  stops sending mid-body, what came is delivered if it is a complete JSON value.
* Only a stream that carries nothing but garbage for more than twice the message cap is
  given up on: ``UnframeableStream`` is raised and the server exits non-zero.
"""

from __future__ import annotations

import json
import logging
import os
import re
import select
from collections.abc import Callable
from dataclasses import dataclass

from .codec import CONTENT_LENGTH, MAX_HEADER_LINE, header_field, parse_length

log = logging.getLogger(__name__)

DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The default message cap: a 10 MB buffer sent in ``didOpen`` fits with room to spare."""
STALL_SECONDS = 1.0
"""How long a frame may stop arriving before the reader looks at what it has."""
PEEK_BYTES = 64 * 1024
"""How much of the start and the end of a skipped body is kept to find its id."""

# A frame header starting inside other bytes: a raw header line (real CR/LF) is never JSON.
_EMBEDDED_HEADER = re.compile(
    rb"(?:content-type[ \t]*:[^\r\n]*\r?\n)?content-length[ \t]*:[ \t]*(\d{1,20})[ \t]*\r?\n",
    re.IGNORECASE,
)
# A header line cut at its start (the bytes before it ended a body whose length was too
# long): "ent-Length: 12".
_CUT_HEADER = re.compile(rb"^([A-Za-z-]{1,14})[ \t]*:[ \t]*(\d{1,20})[ \t]*\r?\n$")
# The start of a header at the very end of a body that ends a JSON object: the length was
# too long and the body took the first bytes of the next frame ("…}Content-Len").
_PARTIAL_HEADER = re.compile(
    rb"\}\s*(c(?:o(?:n(?:t(?:e(?:n(?:t(?:-(?:l(?:e(?:n(?:g(?:t(?:h"
    rb"(?:[ \t]*:[ \t]*(?:\d{1,20}[ \t]*\r?)?)?"
    rb")?)?)?)?)?)?)?)?)?)?)?)?)?)$",
    re.IGNORECASE,
)
_OVERLAP = 256  # bytes of the previous chunk searched again for a header split across reads


class _HeaderlessBody(Exception):
    """A message found without a header while waiting for one (see ``_headerless_message``)."""

    def __init__(self, body: bytearray) -> None:
        super().__init__()
        self.body = body


class UnframeableStream(Exception):
    """The input has not carried one frame header for longer than the message cap."""


@dataclass(frozen=True, slots=True)
class Oversized:
    """A frame whose body was over the cap and was skipped; its first and last bytes."""

    length: int
    head: bytes
    tail: bytes


class FrameReader:
    """Reads LSP frames straight from a file descriptor.

    Raw ``os.read`` rather than a buffered stream: a daemon thread blocked inside a
    ``BufferedReader`` holds its lock, and the interpreter aborts when it exits meanwhile.
    """

    def __init__(
        self,
        fd: int,
        max_bytes: Callable[[], int] | int = DEFAULT_MAX_MESSAGE_BYTES,
        stall_seconds: float = STALL_SECONDS,
    ) -> None:
        self._fd = fd
        self._buffer = bytearray()
        self._max_bytes = max_bytes if callable(max_bytes) else (lambda: max_bytes)
        self._stall = stall_seconds
        self._garbage = 0  # bytes skipped since the last good header
        self._skipping = 0  # bytes of an oversized body still to drop

    # --- reading -------------------------------------------------------------------------
    def _readable(self) -> bool:
        """Wait up to the stall time for input; False when none came."""
        ready, _, _ = select.select([self._fd], [], [], self._stall)
        return bool(ready)

    def _fill(self) -> bool:
        chunk = os.read(self._fd, 65536)
        self._buffer += chunk
        return bool(chunk)

    def _skip_garbage(self, count: int) -> None:
        self._garbage += count
        # Twice the cap: the body of one frame whose header was lost is not enough.
        if self._garbage > 2 * self._max_bytes() + MAX_HEADER_LINE:
            raise UnframeableStream(f"{self._garbage} bytes of input without an LSP frame header")

    def _readline(self) -> bytes | None:
        """One header line, or None at end of input; overlong lines are dropped as garbage."""
        searched = 0
        logged = False
        while (end := self._buffer.find(b"\n", searched)) < 0:
            if len(self._buffer) > MAX_HEADER_LINE:
                # Keep the end: it may be the start of a header whose newline is to come.
                dropped = len(self._buffer) - _OVERLAP
                self._skip_garbage(dropped)
                del self._buffer[:dropped]
            searched = len(self._buffer)
            if self._buffer and not logged and not self._readable():
                body = self._headerless_message()
                if body is not None:
                    raise _HeaderlessBody(body)
                logged = True  # said once; then simply wait, the client may send more
                log.warning(
                    "%d bytes came without a frame header; waiting for a Content-Length header",
                    len(self._buffer),
                )
            if not self._fill():
                return None
        line = bytes(self._buffer[: end + 1])
        del self._buffer[: end + 1]
        return line

    def _headerless_message(self) -> bytearray | None:
        """The stream stalled on bytes without a header (the last message's header was
        lost or never sent, and the client waits for its answer): the JSON object they end
        with, if any, is taken as that message."""
        start = self._buffer.find(b"{")
        for _ in range(16):  # a few candidates: garbage may hold braces too
            if start < 0:
                return None
            if _is_json(memoryview(self._buffer)[start:]):
                body = self._buffer[start:]
                self._skip_garbage(start)
                self._buffer = bytearray()
                self._garbage = 0
                log.warning("read a message of %d bytes that came without a header", len(body))
                return body
            start = self._buffer.find(b"{", start + 1)
        return None

    def _read_header(self) -> int | None:
        """The Content-Length of the next well-formed header block, or None at end of input."""
        length: int | None = None
        valid = True
        seen = False
        while True:
            line = self._readline()
            if line is None:
                return None
            stripped = line.strip()
            if not stripped:
                if seen and valid and length is not None:
                    if self._garbage:
                        log.warning(
                            "skipped %d bytes that were not an LSP frame; resynchronised at "
                            "the next Content-Length header",
                            self._garbage,
                        )
                    self._garbage = 0
                    return length
                if seen:
                    log.warning("a frame header without a valid Content-Length was skipped")
                length, valid, seen = None, True, False
                continue
            field = header_field(stripped)
            if field is not None:
                seen = True
                if field[0] == CONTENT_LENGTH:
                    parsed = parse_length(field[1])
                    if parsed is not None:
                        # The last one wins: an earlier one is a header cut short.
                        length, valid = parsed, True
                    else:
                        valid = False  # negative or not a number
                continue
            # Not a header line: garbage, unless a header starts inside it (resync).
            embedded = _EMBEDDED_HEADER.search(line, max(0, len(line) - 128))
            cut = _CUT_HEADER.match(line)
            if cut is not None and CONTENT_LENGTH.endswith(cut.group(1).lower()):
                length, valid, seen = int(cut.group(2)), True, True
            elif embedded is not None:
                self._skip_garbage(embedded.start())
                length, valid, seen = int(embedded.group(1)), True, True
            else:
                self._skip_garbage(len(line))
                length, valid, seen = None, True, False

    def read_frame(self) -> bytearray | Oversized | None:
        """One message body, a skipped oversized body, or None at end of input."""
        if self._skipping:
            self._discard()  # the rest of an oversized body that was answered early
        try:
            length = self._read_header()
        except _HeaderlessBody as recovered:
            return recovered.body
        if length is None:
            return None
        if length > self._max_bytes():
            return self._skip_body(length)
        return self._read_body(length)

    def _read_body(self, length: int) -> bytearray | None:
        if len(self._buffer) >= length:
            body = self._buffer[:length]
            del self._buffer[:length]
            if not self._cut_at_embedded_header(body, 0):
                self._give_back_partial_header(body)
            return body
        # Read the rest straight into a buffer of the final size: no growing, no copies.
        body = bytearray(length)
        filled = len(self._buffer)
        body[:filled] = self._buffer
        self._buffer = bytearray()
        if self._cut_at_embedded_header(body, 0, filled):
            return body
        stalled = False
        with memoryview(body) as view:
            while filled < length:
                if not stalled and not self._readable():
                    stalled = True
                    if _is_json(view[:filled]):
                        log.warning(
                            "a frame declared %d bytes but stopped after a complete message "
                            "of %d bytes: Content-Length too long",
                            length,
                            filled,
                        )
                        break
                    log.warning("waiting for %d more bytes of a frame", length - filled)
                count = os.readv(self._fd, [view[filled:]])
                if count == 0:
                    return None
                start = filled
                filled += count
                if body.find(b"\n", start, filled) >= 0:
                    cut = self._embedded_at(view[:filled], max(0, start - _OVERLAP))
                    if cut is not None:
                        self._buffer[0:0] = view[cut:filled]
                        filled = cut
                        log.warning("a frame's Content-Length was too long; resynchronised")
                        break
        if filled < length:
            del body[filled:]
        else:
            self._give_back_partial_header(body)
        return body

    def _embedded_at(self, data: memoryview | bytearray, start: int) -> int | None:
        match = _EMBEDDED_HEADER.search(data, start)
        return None if match is None else match.start()

    def _give_back_partial_header(self, body: bytearray) -> None:
        """Hand the start of a header that ends ``body`` back to the header reader."""
        if body.endswith(b"}") or body.rfind(b"}", max(0, len(body) - 64)) < 0:
            return  # the usual case: a body that ends its object
        match = _PARTIAL_HEADER.search(body, max(0, len(body) - 64))
        if match is not None:
            self._buffer[0:0] = body[match.start(1) :]
            del body[match.start(1) :]
            log.warning("a frame's Content-Length was too long; resynchronised")

    def _cut_at_embedded_header(self, body: bytearray, start: int, end: int | None = None) -> bool:
        """Cut ``body`` where a frame header starts in it (putting the rest back); True if so."""
        end = len(body) if end is None else end
        if body.find(b"\n", start, end) < 0:  # compact JSON has no raw newline: the usual case
            return False
        match = _EMBEDDED_HEADER.search(body, start, end)
        if match is None:
            return False
        self._buffer[0:0] = body[match.start() : end]
        del body[match.start() :]
        log.warning("a frame's Content-Length was too long; resynchronised")
        return True

    def _skip_body(self, length: int) -> Oversized:
        """Read past an oversized body, keeping only its first and last bytes.

        When the body stops arriving it is reported at once (a client that lied about the
        length gets its answer) and the rest is skipped before the next frame is read.
        """
        self._skipping = length
        head, tail = self._discard(report_on_stall=True)
        return Oversized(length, head, tail)

    def _discard(self, report_on_stall: bool = False) -> tuple[bytes, bytes]:
        """Drop up to ``_skipping`` bytes, stopping where a frame header starts in them."""
        head = bytearray()
        tail = b""
        carry = b""  # the end of the previous chunk: a header may straddle two
        while self._skipping > 0:
            if not self._buffer:
                if report_on_stall and not self._readable():
                    log.warning("an oversized frame stopped arriving: answered now")
                    break
                if not self._fill():
                    self._skipping = 0
                    break
            chunk = bytes(self._buffer[: self._skipping])
            del self._buffer[: len(chunk)]
            if b"\n" in chunk:
                data = carry + chunk
                match = _EMBEDDED_HEADER.search(data)
                if match is not None:  # the length was a lie: the next frame starts here
                    self._buffer[0:0] = data[match.start() :]
                    chunk = data[len(carry) : max(len(carry), match.start())]
                    self._skipping = len(chunk)
                    log.warning("an oversized frame's Content-Length was too long; resynchronised")
            self._skipping -= len(chunk)
            if len(head) < PEEK_BYTES:
                head += chunk[: PEEK_BYTES - len(head)]
            tail = (tail + chunk)[-PEEK_BYTES:]
            carry = chunk[-_OVERLAP:]
        return bytes(head), tail


def _is_json(data: memoryview) -> bool:
    """Whether ``data`` is one complete JSON value (only asked when a frame stalls)."""
    text = bytes(data).rstrip()
    if not text.endswith((b"}", b"]")):
        return False
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True
