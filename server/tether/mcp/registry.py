"""The run's tools: the front's built-in ones plus the MCP servers' ready ones."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..providers.base import ToolCall, ToolSpec
from ..tools.base import Tool, ToolDeps, ToolResult
from ..tools.registry import ToolRegistry
from .hub import McpHub


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

    async def execute(self, call: ToolCall, deps: ToolDeps) -> ToolResult:
        if self.get(call.name) is None and (server := self.hub.pending(call.name)) is not None:
            await server.wait_ready()  # its tools are being listed (bounded by its startup)
            if self.get(call.name) is None and server.failure is not None:
                return ToolResult.failure(server.failure)
        return await super().execute(call, deps)
