"""LSP framing (``Content-Length`` headers around JSON bodies): the one implementation.

Both sides import it, and it imports neither pygls nor lsprotocol, so the headless client
stays free of them (``tests/unit/test_seams.py``). No other module writes or parses a frame
header (``tests/unit/test_one_framing.py``).

* ``codec``: the header syntax. ``frame``/``frame_head`` write every frame (the server's
  ``StdoutWriter``, the clients' requests); ``header_field``, ``parse_length`` and
  ``content_length`` read header lines for every reader; ``FrameDecoder`` splits a peer's
  bytes into bodies without doing I/O (the asyncio benchmarks client feeds it its reads).
* ``reader``: the server's input reader. It stays a separate I/O loop because it must be
  hardened against hostile clients (resynchronisation, the size cap, stalls) and read raw
  ``os.read`` on a daemon thread; clients read the server, whose output is well-formed, so
  they need none of that: the decoder, or ``content_length`` on the header block their own
  stream hands them (anyio's ``receive_until`` in the client library, ``readline`` in the
  e2e helper), which keeps each client's I/O in its own idiom.
"""

from .codec import (
    HEADER_END,
    MAX_HEADER_LINE,
    FrameDecoder,
    FrameError,
    content_length,
    frame,
    frame_head,
    header_field,
    parse_length,
)
from .reader import (
    DEFAULT_MAX_MESSAGE_BYTES,
    PEEK_BYTES,
    STALL_SECONDS,
    FrameReader,
    Oversized,
    UnframeableStream,
)

__all__ = [
    "DEFAULT_MAX_MESSAGE_BYTES",
    "HEADER_END",
    "MAX_HEADER_LINE",
    "PEEK_BYTES",
    "STALL_SECONDS",
    "FrameDecoder",
    "FrameError",
    "FrameReader",
    "Oversized",
    "UnframeableStream",
    "content_length",
    "frame",
    "frame_head",
    "header_field",
    "parse_length",
]
