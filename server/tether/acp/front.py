"""``tether acp``'s start: ``initialize`` is answered at once, while the core (runs, tools,
providers, ~1 s of imports) is loaded in a worker thread; every other method waits for it.

The model SDK of the configured provider is primed next, on a thread of its own, so the
first prompt does not pay for it either. Only ``wire`` and the package's version are
imported before the first answer.
"""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Callable
from typing import Any, BinaryIO, Protocol

import tether

from .wire import INTERNAL_ERROR, INVALID_PARAMS, Connection, RpcError


class AcpServer(Protocol):
    """What the front needs of the core (``server.AcpServer``)."""

    provider: str | None
    connection: Connection | None

    def capabilities_from(self, declared: dict[str, Any]) -> None: ...

    def handlers(self) -> dict[str, Any]: ...

    def cancel(self, raw: Any) -> None: ...

    async def close(self) -> None: ...


log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
METHODS = ("authenticate", "session/new", "session/load", "session/set_mode", "session/prompt")


def initialize_result() -> dict[str, Any]:
    """The answer to ``initialize``: version 1, what Tether offers, no auth methods."""
    return {
        "protocolVersion": PROTOCOL_VERSION,
        "agentCapabilities": {
            "loadSession": True,
            "promptCapabilities": {"image": False, "audio": False, "embeddedContext": True},
            "mcpCapabilities": {"http": True, "sse": False},
        },
        "agentInfo": {"name": "tether", "title": "Tether", "version": tether.__version__},
        "authMethods": [],
    }


def check_initialize(raw: Any) -> dict[str, Any]:
    """The client's capabilities from ``initialize`` params, or ``-32602``."""
    params = raw if isinstance(raw, dict) else None
    version = params.get("protocolVersion") if params is not None else None
    if not isinstance(version, int) or isinstance(version, bool):
        raise RpcError(INVALID_PARAMS, "initialize: protocolVersion: an integer")
    capabilities = params.get("clientCapabilities") if params is not None else None
    return capabilities if isinstance(capabilities, dict) else {}


class Front:
    """The connection's handlers until the core is loaded, then the core's."""

    def __init__(self, build: Callable[[], AcpServer]) -> None:
        """``build`` makes the core (in a worker thread)."""
        self._build = build
        self._server: asyncio.Future[AcpServer] | None = None
        self.connection: Connection | None = None
        self._capabilities: dict[str, Any] = {}

    def _start(self) -> asyncio.Future[AcpServer]:
        if self._server is None:
            self._server = asyncio.ensure_future(asyncio.to_thread(self._loaded))
        return self._server

    def _loaded(self) -> AcpServer:
        # Everything imported here lives as long as the process: cyclic collections while
        # it is built find nothing (as for ``tether serve``), and it is frozen after.
        gc.disable()
        try:
            server = self._build()
        finally:
            gc.enable()
        gc.freeze()
        from ..providers import warm_up_thread

        # The configured provider's SDK primed (one canned request) on a thread of its
        # own: the client's first prompt, seconds later, finds it done.
        warm_up_thread(server.provider)
        return server

    async def _core(self) -> AcpServer:
        try:
            server = await self._start()
        except Exception as exc:  # a TETHER_* variable or the config file cannot be used
            raise RpcError(INTERNAL_ERROR, f"Tether could not start: {exc}"[:1000]) from exc
        if server.connection is None:
            assert self.connection is not None
            server.connection = self.connection
            server.capabilities_from(self._capabilities)
        return server

    async def initialize(self, raw: Any) -> dict[str, Any]:
        self._capabilities = check_initialize(raw)
        if self._server is not None and self._server.done() and not self._server.cancelled():
            self._server.result().capabilities_from(self._capabilities)
        return initialize_result()

    def _forward(self, method: str) -> Callable[[Any], Any]:
        async def forward(raw: Any) -> Any:
            server = await self._core()
            return await server.handlers()[method](raw)

        return forward

    def _cancel(self, raw: Any) -> None:
        if self._server is not None and self._server.done() and not self._server.cancelled():
            self._server.result().cancel(raw)  # before the core: no prompt to cancel

    async def _close(self) -> None:
        if self._server is None:
            return
        try:
            server = await self._server
        except Exception:
            return
        await server.close()

    async def serve(self, stdin: BinaryIO, stdout: BinaryIO) -> int:
        """Serve until end of input; the exit status (0)."""
        handlers: dict[str, Any] = {"initialize": self.initialize}
        handlers.update({method: self._forward(method) for method in METHODS})
        self.connection = Connection(stdin, stdout, handlers, {"session/cancel": self._cancel})
        loop = asyncio.get_running_loop()
        loop.call_soon(self._start)  # load the core while the client sends initialize
        await self.connection.serve(self._close)
        return 0
