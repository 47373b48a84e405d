"""One configured MCP server: started when first needed, its tools listed once, its calls
bounded in time; when it crashes, cannot start or is cut off, the error names it.

The connection lives in one task (``_serve``: the SDK's session and the transport are
entered and left there) that the hub's task group runs; calls come from the runs' tasks.
A server that ended is started again by the next call that needs it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from anyio.abc import TaskGroup

from tether_protocol import McpServerSettings

from ..errors import ToolError
from ..text.redact import redact_args, redact_text, redact_url
from .stdio import Ending, expand, neutral_folder, server_environment, stdio_transport

if TYPE_CHECKING:
    import mcp_types as types
    from mcp.client.session import ClientSession

log = logging.getLogger(__name__)

DEFAULT_TOOL_TIMEOUT = 120.0
DEFAULT_STARTUP_TIMEOUT = 10.0
MAX_LISTED_PAGES = 50
MAX_TOOLS = 500
"""A server listing more tools than this has the rest left out (with a log line)."""


def import_sdk() -> None:
    """Import what a connection uses of the SDK (once; later calls cost nothing)."""
    import mcp.client.session
    import mcp.client.streamable_http
    import mcp.shared.message
    import mcp_types

    del mcp, mcp_types


@dataclass(frozen=True, slots=True)
class RemoteTool:
    """A tool as the server listed it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only_hint: bool
    destructive_hint: bool = False
    """Annotated ``destructiveHint: true`` (outweighs ``readOnlyHint``)."""


class McpServer:
    """A configured server and its connection (none until something needs it)."""

    def __init__(
        self,
        name: str,
        settings: McpServerSettings,
        root: Path | None,
        environ: Mapping[str, str],
    ) -> None:
        self.name = name
        self.settings = settings
        self.root = root
        self.environ = environ
        self.tools: tuple[RemoteTool, ...] | None = None
        """The tools it listed (filtered by the settings); None before it first started."""
        self.failure: str | None = None
        """Why it last failed to start or ended (None: fine, or never started)."""
        self._session: ClientSession | None = None
        self._ending = Ending()
        self._ready = anyio.Event()
        self._stop = anyio.Event()
        self._done = anyio.Event()
        self._starting = False
        self._connecting = anyio.CancelScope()
        self._done.set()  # not running
        self.since: float | None = None
        """When it was first asked to start (``time.monotonic()``); None before."""

    @property
    def tool_timeout(self) -> float:
        return self.settings.tool_timeout_seconds or DEFAULT_TOOL_TIMEOUT

    @property
    def startup_timeout(self) -> float:
        return self.settings.startup_timeout_seconds or DEFAULT_STARTUP_TIMEOUT

    @property
    def trusts_read_only_hints(self) -> bool:
        return bool(self.settings.trust_read_only_hints)

    def where(self) -> str:
        """What the server is, for the approval: its command line or its URL."""
        if self.settings.command is not None:
            import shlex

            return shlex.join([self.settings.command, *redact_args(self.settings.args or [])])
        return redact_url(str(self.settings.url))

    @property
    def stopping(self) -> bool:
        """Asked to stop (its ending is no failure to tell)."""
        return self._stop.is_set()

    @property
    def in_first_start(self) -> bool:
        """Being started for the first time: it has neither listed its tools nor failed."""
        return self.tools is None and self.failure is None and not self.stopping

    @property
    def running(self) -> bool:
        """Connected, and neither exited nor cut off."""
        ending = self._ending
        alive = not ending.exited.is_set() and ending.reason is None
        return self._session is not None and not self._done.is_set() and alive

    def start(self, tasks: TaskGroup) -> None:
        """Start it in the background unless it is running or starting."""
        if self._starting or self.running:
            return
        self._starting = True
        if self.since is None:
            self.since = time.monotonic()
        if self._ready.is_set():  # a new start (the first one's is awaited already)
            self._ready = anyio.Event()
        self._stop = anyio.Event()
        self._done = anyio.Event()
        self._ending = Ending()
        tasks.start_soon(self._serve, name=f"mcp server {self.name}")

    async def wait_ready(self) -> None:
        """Until it has started (or failed to: ``failure`` says why)."""
        await self._ready.wait()

    async def stop(self) -> None:
        """End the connection and the process (its group); returns once it is gone."""
        self._stop.set()
        if not self._ready.is_set():
            self._connecting.cancel()  # still starting: no need to wait for it to finish
        await self._done.wait()

    async def _serve(self) -> None:
        self._connecting = anyio.CancelScope()
        try:
            # The SDK takes a while to import (seconds on a busy machine): in a thread, so
            # the event loop (the editor's requests, a run's first answer) goes on; a stop
            # meanwhile leaves the thread to finish alone.
            with self._connecting:
                await anyio.to_thread.run_sync(import_sdk, abandon_on_cancel=True)
            self._connecting = anyio.CancelScope()  # the handshake's
            if self._stop.is_set():
                self.failure = f"MCP server '{self.name}' was stopped while starting"
                return
            async with AsyncExitStack() as stack:
                session = await self._connect(stack)
                if self._connecting.cancelled_caught:
                    self.failure = f"MCP server '{self.name}' was stopped while starting"
                    return
                self._session = session
                self.failure = None
                self._starting = False
                self._ready.set()
                async with anyio.create_task_group() as watch:
                    watch.start_soon(self._watch_exit, watch)
                    await self._stop.wait()
                    watch.cancel_scope.cancel()
        except Exception as exc:  # a server must never take Tether with it
            self.failure = self._describe_failure(exc)
            if not self._stop.is_set():  # (asked to stop, its ending is no news)
                log.debug("%s", self.failure)  # the hub warns once (``warn_failed``)
        finally:
            self._session = None
            self._starting = False
            self._ready.set()
            self._done.set()

    async def _watch_exit(self, watch: TaskGroup) -> None:
        await self._ending.exited.wait()
        if not self._stop.is_set():  # it ended by itself
            self.failure = self.ended()
            log.warning("%s", self.failure)
        self._stop.set()

    async def _connect(self, stack: AsyncExitStack) -> ClientSession:
        import mcp_types as types
        from mcp.client.session import ClientSession

        import tether

        # The transport's and the session's task groups are entered here, outside any
        # cancel scope of this function (anyio's scopes must nest); only the handshake
        # and the listing are bounded by the startup timeout.
        if self.settings.command is not None:
            env, folder = await anyio.to_thread.run_sync(self._launch)  # (reads the disk)
            transport = stdio_transport(
                self.settings.command, self.settings.args or [], env, folder, self._ending
            )
        else:
            transport = self._http()
        read, write = await stack.enter_async_context(transport)
        session = await stack.enter_async_context(
            ClientSession(
                read,
                write,
                client_info=types.Implementation(name="tether", version=tether.__version__),
            )
        )
        with self._connecting, anyio.fail_after(self.startup_timeout):  # stop() cancels it
            await session.initialize()
            self.tools = await self._list(session)
        return session

    def _launch(self) -> tuple[dict[str, str], Path]:
        """Its environment and the folder it runs in (``neutral_folder``: its ``cwd`` or the
        home folder, never the workspace)."""
        env = server_environment(self.environ, self.settings.env, self.root)
        return env, neutral_folder(self.settings.cwd, self.environ, self.root)

    def _http(self) -> Any:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        headers = {k: expand(v, self.environ) for k, v in (self.settings.headers or {}).items()}
        client = create_mcp_http_client(headers=headers)
        return streamable_http_client(str(self.settings.url), http_client=client)

    async def _list(self, session: ClientSession) -> tuple[RemoteTool, ...]:
        import mcp_types as types

        found: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(MAX_LISTED_PAGES):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            listed = await session.list_tools(params=params)
            found.extend(listed.tools)
            cursor = listed.next_cursor
            if not cursor or len(found) >= MAX_TOOLS:
                break
        if len(found) > MAX_TOOLS:
            log.warning(
                "MCP server %r lists %d tools: the first %d kept", self.name, len(found), MAX_TOOLS
            )
        enabled = self.settings.enabled_tools
        disabled = set(self.settings.disabled_tools or ())
        kept = []
        for tool in found[:MAX_TOOLS]:
            if (enabled is not None and tool.name not in enabled) or tool.name in disabled:
                continue
            hint = bool(tool.annotations and tool.annotations.read_only_hint)
            destructive = bool(tool.annotations and tool.annotations.destructive_hint is True)
            schema = dict(tool.input_schema or {})
            schema.setdefault("type", "object")
            kept.append(RemoteTool(tool.name, tool.description or "", schema, hint, destructive))
        return tuple(kept)

    def ended(self) -> str:
        """Why the connection ended, as a tool error says it."""
        ending = self._ending
        if ending.reason is not None:
            return f"MCP server '{self.name}' was cut off: {ending.reason}"
        if ending.returncode is not None:
            code = ending.returncode
            said = ending.last_line()
            how = f"killed by signal {-code}" if code < 0 else f"code {code}"
            return f"MCP server '{self.name}' exited ({how})" + (f": {said}" if said else "")
        return f"MCP server '{self.name}' closed the connection"

    def _describe_failure(self, exc: BaseException) -> str:
        # The SDK's session and the transport each run a task group: the error comes
        # wrapped, its startup timeout too.
        while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        if isinstance(exc, TimeoutError):
            return (
                f"MCP server '{self.name}' did not start within {self.startup_timeout:g} s"
                " (startupTimeoutSeconds)"
            )
        if isinstance(exc, FileNotFoundError | PermissionError):
            what = exc.filename or self.settings.command
            return f"MCP server '{self.name}' cannot start: {exc.strerror}: {what}"
        if self._ending.reason is not None or self._ending.returncode is not None:
            return self.ended()
        said = redact_text(str(exc)).strip()  # an HTTP error names the URL
        detail = said.splitlines()[0][:300] if said else ""
        return f"MCP server '{self.name}' failed: {type(exc).__name__}" + (
            f": {detail}" if detail else ""
        )

    async def session(self, tasks: TaskGroup) -> ClientSession:
        """The live session, starting the server if needed (again, after it ended);
        ``ToolError`` when it cannot."""
        if not self.running and not self._starting and not self._done.is_set():
            self._stop.set()  # it ended: let the old connection wind down first
            await self._done.wait()
        self.start(tasks)
        await self.wait_ready()
        if self._session is None:
            raise ToolError(self.failure or f"MCP server '{self.name}' is not running")
        return self._session

    async def call(
        self, tasks: TaskGroup, tool: str, arguments: dict[str, Any]
    ) -> types.CallToolResult:
        """Call ``tool``; ``ToolError`` for a timeout (the call cancelled on the server), a
        crash, a cut-off or a result that is not one."""
        import mcp_types as types
        from pydantic import ValidationError

        session = await self.session(tasks)
        timeout = self.tool_timeout
        try:
            with anyio.move_on_after(timeout) as waited:
                result = await session.call_tool(tool, arguments)
        except ValidationError as exc:
            raise ToolError(
                f"MCP server '{self.name}' answered {tool} with a malformed result: "
                f"{exc.errors()[0]['msg']}"
            ) from None
        except Exception as exc:
            if self._ending.reason is None and self._ending.returncode is None:
                with anyio.move_on_after(1):  # a crash: its exit follows the closed pipe
                    await self._ending.exited.wait()
            if self._ending.reason is not None or self._ending.returncode is not None:
                raise ToolError(self.ended()) from None
            detail = redact_text(str(exc)).strip()[:500] or type(exc).__name__
            raise ToolError(f"MCP server '{self.name}': {tool} failed: {detail}") from None
        if waited.cancelled_caught:
            raise ToolError(
                f"MCP server '{self.name}': {tool} timed out after {timeout:g} s "
                "(toolTimeoutSeconds); the call was cancelled on the server"
            )
        if not isinstance(result, types.CallToolResult):
            raise ToolError(f"MCP server '{self.name}' answered {tool} with no tool result")
        return result
