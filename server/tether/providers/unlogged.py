"""The warm-up's canned request leaves no log line: it is no traffic.

``prime_with`` answers one request in-process to load what a first real call would; the
SDK's HTTP client logs it like any request (``HTTP Request: POST https://api.anthropic.com/…``
at info), which would read as if Tether had talked to the provider. While a thread primes,
``unlogged`` drops every record that thread makes — the SDKs', their HTTP clients', its
event loop's — and nothing else: a run on another thread meanwhile logs as always.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator

QUIET_LOGGERS = ("httpx2", "httpcore2", "httpx", "httpcore", "openai", "anthropic", "asyncio")
"""The loggers (and their children) a canned request can reach."""


class _PrimingThreads(logging.Filter):
    """Drops the records of the threads that are priming."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: set[int] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        return record.thread not in self.threads


_FILTER = _PrimingThreads()
_LOCK = threading.Lock()


@contextlib.contextmanager
def unlogged() -> Iterator[None]:
    """No record of this thread reaches a log while inside (see the module)."""
    me = threading.get_ident()
    with _LOCK:
        for holder in _holders():
            if _FILTER not in holder.filters:
                holder.addFilter(_FILTER)
        _FILTER.threads.add(me)
    try:
        yield
    finally:
        with _LOCK:
            _FILTER.threads.discard(me)


def _holders() -> list[logging.Filterer]:
    """The loggers of ``QUIET_LOGGERS`` that exist now, and the root logger's handlers
    (which every record that propagates passes, from a logger made later too)."""
    names = [
        name
        for name in list(logging.Logger.manager.loggerDict)
        if name.split(".")[0] in QUIET_LOGGERS
    ]
    loggers: list[logging.Filterer] = [logging.getLogger(name) for name in names]
    return [*loggers, *logging.getLogger().handlers]
