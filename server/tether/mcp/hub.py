"""The MCP servers of a front (``tether serve``): configured from the settings, started in
the background, stopped with the front. Owns the task group every connection runs in.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType

import anyio
from anyio.abc import TaskGroup

from tether_protocol import McpServerSettings

from ..text.display import shown
from .names import server_prefix, unique_names
from .server import McpServer
from .tools import McpTool, mcp_tool

log = logging.getLogger(__name__)

STOP_SECONDS = 5.0
"""The longest closing waits for the servers (each has ended every process it started
within ``stdio.GRACE_SECONDS`` + ``stdio.TREE_SECONDS``, 3.5 s)."""


class McpHub:
    """The configured servers; ``async with`` it (or ``serve``) to run them."""

    def __init__(
        self, environ: Mapping[str, str], warn: Callable[[str], None] | None = None
    ) -> None:
        self.environ = dict(environ)
        self.warn = warn
        """Tells the user a server could not start (once per server and settings)."""
        self.servers: dict[str, McpServer] = {}
        self._tasks: TaskGroup | None = None
        self._closing = anyio.Event()
        self._closed = anyio.Event()
        self._warned: set[int] = set()
        self._made: tuple[tuple[tuple[str, int], ...], list[McpTool]] | None = None
        self._start_asked = False

    async def __aenter__(self) -> McpHub:
        self._tasks = await anyio.create_task_group().__aenter__()
        if self._start_asked:  # asked before the hub ran: now
            self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        tasks = self._tasks
        assert tasks is not None
        with anyio.CancelScope(shield=True), anyio.move_on_after(STOP_SECONDS):
            await self._stop_all(list(self.servers.values()))
        tasks.cancel_scope.cancel()
        self._tasks = None
        return await tasks.__aexit__(exc_type, exc, tb)

    async def serve(self) -> None:
        """Run until ``close``: the front's own task."""
        try:
            async with self:
                await self._closing.wait()
        finally:
            self._closed.set()

    async def close(self) -> None:
        """Stop every server (their process groups killed) and end ``serve``."""
        self._closing.set()
        await self._closed.wait()

    @staticmethod
    async def _stop_all(servers: Sequence[McpServer]) -> None:
        async with anyio.create_task_group() as stopping:
            for server in servers:
                stopping.start_soon(server.stop)

    async def configure(self, settings: Mapping[str, McpServerSettings], root: Path | None) -> None:
        """Use these servers: a changed or removed one is stopped, a new one created (not
        started)."""
        wanted = {n: s for n, s in settings.items() if s.enabled is not False}
        gone = [
            server
            for name, server in self.servers.items()
            if name not in wanted or wanted[name] != server.settings or server.root != root
        ]
        for server in gone:
            del self.servers[server.name]
        if gone:
            await self._stop_all(gone)
        for name, config in wanted.items():
            if name not in self.servers:
                self.servers[name] = McpServer(name, config, root, self.environ)

    def start(self) -> None:
        """Start every server that is not running, in the background (once the hub runs,
        when it does not yet)."""
        if self._tasks is None:
            self._start_asked = not self._closing.is_set()
            return
        for server in self.servers.values():
            if not server.running:
                server.start(self._tasks)  # nothing when it is starting
                self._tasks.start_soon(self._warn_once_started, server)

    async def _warn_once_started(self, server: McpServer) -> None:
        await server.wait_ready()
        self.warn_failed()

    async def ready(self, within: float) -> None:
        """Wait at most ``within`` seconds for the servers being started."""
        with anyio.move_on_after(within):
            for server in list(self.servers.values()):
                await server.wait_ready()

    def warn_failed(self) -> None:
        """One warning for each server that could not start (the others work on)."""
        for server in self.servers.values():
            failed = server.tools is None and server.failure and not server.stopping
            if failed and id(server) not in self._warned:
                self._warned.add(id(server))
                said = shown(server.failure or "")  # names and the server's own last words
                log.warning("%s", said)
                if self.warn is not None:
                    self.warn(f"{said}; its tools are not available")

    def tools(self) -> list[McpTool]:
        """The tools of every server that has listed them, as the model sees them."""
        if self._tasks is None:
            return []
        key = tuple((s.name, id(s.tools)) for s in self.servers.values() if s.tools is not None)
        if self._made is not None and self._made[0] == key:
            return self._made[1]
        taken: set[str] = set()
        made: list[McpTool] = []
        for server in self.servers.values():
            if server.tools is None:
                continue
            names = unique_names(server.name, (t.name for t in server.tools), taken)
            for remote in server.tools:
                if remote.name in names:
                    made.append(mcp_tool(names[remote.name], server, remote, self._tasks))
        self._made = (key, made)
        return made

    def pending(self, name: str) -> McpServer | None:
        """The server still starting whose tool ``name`` may be (``mcp__<server>__…``, the
        server's name as model-facing names spell it)."""
        for server in self.servers.values():
            starting = server.tools is None and server.failure is None
            if starting and name.startswith(server_prefix(server.name)):
                return server
        return None
