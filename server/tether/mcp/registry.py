"""The run's tools: the front's built-in ones plus the MCP servers' ready ones."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..providers.base import ToolCall, ToolSpec
from ..tools.base import Tool, ToolDeps, ToolResult
from ..tools.registry import ToolRegistry
from .hub import McpHub
from .server import McpServer


class RunTools(ToolRegistry):
    """The tools of a run: the front's built-in ones and the MCP servers' ready ones, looked
    up at every step (a server that starts late joins the next step)."""

    def __init__(self, base: ToolRegistry, hub: McpHub) -> None:
        super().__init__(())
        self.base = base
        self.hub = hub

    def _mcp(self) -> dict[str, Tool[Any]]:
        return {t.name: t for t in self.hub.tools()}

    @property
    def names(self) -> list[str]:
        return [*self.base.names, *self._mcp()]

    def get(self, name: str) -> Tool[Any] | None:
        return self.base.get(name) or self._mcp().get(name)

    def specs(self) -> Sequence[ToolSpec]:
        extra = [ToolSpec(t.name, t.description, t.parameters_schema()) for t in self.hub.tools()]
        return [*self.base.specs(), *extra]

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
