"""The session log's remembered hashes (``records.text_hash``) as a 10 MB text meets them,
on small texts: every text counts as long, hashed in pieces of 7 characters."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from tether.session import records


@contextlib.contextmanager
def every_text_hashed_in_pieces() -> Iterator[None]:
    previous = records.HASHED_KEPT, records.HASHED_PIECE
    records.HASHED_KEPT, records.HASHED_PIECE = 0, 7
    records._hashed.clear()
    try:
        yield
    finally:
        records.HASHED_KEPT, records.HASHED_PIECE = previous
        records._hashed.clear()
