"""The MCP servers of a front (``tether serve``): configured from the settings, started in
the background, stopped with the front. Owns the task group every connection runs in.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType

import anyio
from anyio.abc import TaskGroup

from tether_protocol import McpServerSettings

from ..prompt.frames import quote
from ..text.display import shown
from ..tools.progress import PROGRESS_SECONDS, ReportProgress
from .names import server_prefix, unique_names
from .server import McpServer
from .tools import McpTool, mcp_tool

log = logging.getLogger(__name__)

STOP_SECONDS = 5.0
"""The longest closing waits for the servers (each has ended every process it started
within ``stdio.GRACE_SECONDS`` + ``stdio.TREE_SECONDS``, 3.5 s)."""
START_WAIT_SECONDS = 30.0
"""The longest a run waits, before its first model call, for a server in its first start,
counted from that start (its ``startupTimeoutSeconds`` ends the wait sooner: it fails)."""


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
        self._told_slow: set[int] = set()
        """Servers the user was told were still starting after a run's wait (by id)."""
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

    async def settle(self, report: ReportProgress, within: float = START_WAIT_SECONDS) -> None:
        """Wait for the servers in their first start, each until it has listed its tools or
        failed, at most ``within`` seconds from its start; while it waits, ``report`` says
        which it waits for (every ``PROGRESS_SECONDS``, when that or the whole seconds
        changed), and once it waited, how it ended. A server still starting after it is
        told to the user once (``warn``); its tools join when it is up."""
        awaited = [s for s in self.servers.values() if s.in_first_start]
        if not awaited:
            return
        began = time.monotonic()
        told = False

        def tell(line: str) -> None:
            nonlocal told
            told = True
            try:
                report(int((time.monotonic() - began) * 1000), line, "")
            except Exception:  # a report that fails stops nothing
                log.exception("reporting the wait for MCP servers failed")

        async def keep_telling() -> None:
            said: tuple[int, str] | None = None
            while True:
                await anyio.sleep(PROGRESS_SECONDS)
                now = (int(time.monotonic() - began), _waiting_for(awaited))
                if now != said:
                    said = now
                    tell(now[1])

        async with anyio.create_task_group() as telling:
            telling.start_soon(keep_telling)
            for server in awaited:
                since = began if server.since is None else server.since
                with anyio.move_on_after(since + within - time.monotonic()):
                    await server.wait_ready()
            telling.cancel_scope.cancel()
        missing = [s for s in awaited if s.tools is None]
        if told or missing:
            tell(_ended(awaited))
        self.warn_failed()
        for server in missing:
            if server.in_first_start and id(server) not in self._told_slow:
                self._told_slow.add(id(server))
                said = shown(
                    f"MCP server '{server.name}' is still starting after {within:g} s; "
                    "its tools are added when it is up"
                )
                log.warning("%s", said)
                if self.warn is not None:
                    self.warn(said)

    def missing(self) -> str | None:
        """What the model is told of the servers whose tools it does not have (still
        starting, or could not start), each name quoted; None when there is none."""
        lines = []
        for server in self.servers.values():
            if server.tools is not None or server.stopping:
                continue
            name = f"MCP server {quote(server.name)}"
            if server.failure is None:
                lines.append(
                    f"- {name} is still starting: its tools are not available yet; they are "
                    "added when it is up."
                )
            else:
                lines.append(f"- {name} could not start: its tools are not available.")
        if not lines:
            return None
        return "Tools you do not have in this run:\n" + "\n".join(lines)

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


def _names(servers: Sequence[McpServer]) -> str:
    """``MCP server notes`` or ``MCP servers notes, docs``, as people are shown names."""
    names = ", ".join(shown(s.name) for s in servers)
    return f"MCP server{'s' if len(servers) > 1 else ''} {names}"


def _waiting_for(servers: Sequence[McpServer]) -> str:
    """``waiting for MCP server notes to start`` (those of ``servers`` still starting)."""
    return f"waiting for {_names([s for s in servers if s.in_first_start] or servers)} to start"


def _ended(servers: Sequence[McpServer]) -> str:
    """How the wait for ``servers`` ended, as the last report says it."""
    starting = [s for s in servers if s.in_first_start]
    failed = [s for s in servers if s.tools is None and s.failure is not None]
    said = []
    if starting:
        said.append(f"{_names(starting)} still starting")
    if failed:
        said.append(f"{_names(failed)} could not start")
    if not said:
        return f"{_names(servers)} started"
    whose = "its" if len(starting) + len(failed) == 1 else "their"
    return "; ".join(said) + f": going on without {whose} tools"
