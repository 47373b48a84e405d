"""LSP frame headers: how a frame is written and how its header block is read.

The one place that knows the header syntax. The hardened server reader
(``framing.reader``) and the well-behaved peers' decoder below both parse header lines
with ``header_field`` and ``parse_length``; every writer goes through ``frame``.
"""

from __future__ import annotations

from collections.abc import Iterator

CONTENT_LENGTH = b"content-length"
CONTENT_TYPE = b"content-type"
"""The only two headers LSP defines (names lower-cased)."""
HEADER_END = b"\r\n\r\n"
"""What ends a header block."""
MAX_HEADER_LINE = 64 * 1024
"""A header line (or, for the decoder, a header block) longer than this is garbage."""

# The headers pygls writes; the content type is the default, stated for strict readers.
_FRAME_HEAD = (
    b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"
)


class FrameError(ValueError):
    """A header block from a peer that should frame correctly (the server) was not valid."""


def frame_head(length: int) -> bytes:
    """The header block of a frame whose body is ``length`` bytes."""
    return _FRAME_HEAD % length


def frame(body: bytes) -> bytes:
    """An LSP frame around a JSON body."""
    return _FRAME_HEAD % len(body) + body


def header_field(line: bytes) -> tuple[bytes, bytes] | None:
    """(lower-cased name, stripped value) of an LSP header line, None for any other line."""
    name, colon, value = line.partition(b":")
    if not colon:
        return None
    name = name.strip().lower()
    if name != CONTENT_LENGTH and name != CONTENT_TYPE:
        return None
    return name, value.strip()


def parse_length(value: bytes) -> int | None:
    """A ``Content-Length`` value as a number; None when negative, not a number or absurd."""
    if value.isdigit() and len(value) <= 20:
        return int(value)
    return None


def content_length(head: bytes) -> int:
    """The body length a complete header block declares (the last valid one wins, as in
    the server's reader); ``FrameError`` when it declares none."""
    length: int | None = None
    for line in head.split(b"\n"):
        field = header_field(line)
        if field is not None and field[0] == CONTENT_LENGTH:
            length = parse_length(field[1])
    if length is None:
        raise FrameError(f"no valid Content-Length in {bytes(head[:200])!r}")
    return length


class FrameDecoder:
    """Splits the frames of a well-behaved peer out of bytes as they arrive (no I/O).

    For clients reading the server: strict (``FrameError`` on a bad header block) rather
    than resynchronising, since the server's output is never malformed.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> None:
        """Add bytes read from the peer."""
        self._buffer += data

    def __iter__(self) -> Iterator[bytes]:
        """The complete bodies received so far, in order (each taken once)."""
        buffer = self._buffer
        taken = 0  # the front is dropped once, not after every body of a burst
        try:
            while True:
                head_end = buffer.find(HEADER_END, taken)
                if head_end < 0:
                    if len(buffer) - taken > MAX_HEADER_LINE:
                        raise FrameError(f"{len(buffer) - taken} bytes without a frame header end")
                    return
                start = head_end + len(HEADER_END)
                end = start + content_length(bytes(buffer[taken:head_end]))
                if len(buffer) < end:
                    return
                taken = end
                yield bytes(buffer[start:end])
        finally:
            del buffer[:taken]
