"""The run's tools: the front's built-in ones plus the MCP servers' ready ones, whose
definitions the model reads as text from a server (``prompt.server_text``: framed, flagged,
capped)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from ..prompt.server_text import server_definitions
from ..providers.base import ToolCall, ToolSpec
from ..text.display import shown
from ..tools.base import Tool, ToolDeps, ToolResult
from ..tools.progress import ReportProgress
from ..tools.registry import ToolRegistry
from .hub import McpHub
from .server import McpServer
from .tools import McpTool

log = logging.getLogger(__name__)

WAIT_CALL = "mcp-start"
"""The call id the wait for the servers is reported under: no call of the model's."""


class RunTools(ToolRegistry):
    """The tools of a run: the front's built-in ones and the MCP servers' ready ones, looked
    up at every step (a server that starts late joins the next step)."""

    def __init__(self, base: ToolRegistry, hub: McpHub) -> None:
        super().__init__(())
        self.base = base
        self.hub = hub
        self._specs: tuple[list[McpTool], list[ToolSpec]] | None = None
        """The MCP tools' definitions, for the hub's list they were made from."""

    def _mcp(self) -> dict[str, Tool[Any]]:
        return {t.name: t for t in self.hub.tools()}

    @property
    def names(self) -> list[str]:
        return [*self.base.names, *self._mcp()]

    def get(self, name: str) -> Tool[Any] | None:
        return self.base.get(name) or self._mcp().get(name)

    def specs(self) -> Sequence[ToolSpec]:
        tools = self.hub.tools()  # the same list until a server's tools change
        if self._specs is None or self._specs[0] is not tools:
            self._specs = (tools, model_specs(tools))
        return [*self.base.specs(), *self._specs[1]]

    async def ready(self, progress_of: Callable[[str, str], ReportProgress]) -> str | None:
        """Wait for the servers in their first start (``McpHub.settle``: bounded, reported
        as the progress of Tether's own ``mcp-start``); the servers whose tools are still
        missing, for the model."""
        await self.hub.settle(progress_of(WAIT_CALL, "mcp"))
        return self.hub.missing()

    async def _ready(self, name: str) -> McpServer | None:
        """Wait while the server that will have the tool ``name`` lists its tools (bounded
        by its startup); the server when it failed instead."""
        if self.get(name) is None and (server := self.hub.pending(name)) is not None:
            await server.wait_ready()
            if self.get(name) is None and server.failure is not None:
                return server
        return None

    async def label(self, name: str) -> str | None:
        await self._ready(name)  # the call's event names the server's tool, once it is known
        return await super().label(name)

    async def execute(self, call: ToolCall, deps: ToolDeps) -> ToolResult:
        failed = await self._ready(call.name)
        if failed is not None and failed.failure is not None:
            return ToolResult.failure(failed.failure)
        return await super().execute(call, deps)


def model_specs(tools: Sequence[McpTool]) -> list[ToolSpec]:
    """The MCP tools as the model reads them, server by server (each server's caps are its
    own); a tool whose server's words look like instructions is logged once per listing."""
    by_server: dict[str, list[McpTool]] = {}
    for tool in tools:
        by_server.setdefault(tool.server.name, []).append(tool)
    specs: list[ToolSpec] = []
    for server, own in by_server.items():
        listed = [(t.remote.name, t.remote.description, t.remote.input_schema) for t in own]
        for tool, made in zip(own, server_definitions(server, listed), strict=True):
            if made.markers:
                log.warning(
                    "MCP server '%s': what it says of %s looks like instructions (%s); the "
                    "model is told not to follow it",
                    shown(server),
                    shown(tool.remote.name),
                    ", ".join(made.markers),
                )
            specs.append(ToolSpec(tool.name, made.description, made.schema))
    return specs
