"""An MCP server's tool as a Tether tool: asked through the approval gate like every tool
that acts (the server is another program: a call may do anything), performed as one
``tools/call``.

Each carries its server's configured name and its own listed name (``mcp_name``), which the
rules match, and what its server says it does (``effect``): nothing beyond reading when
annotated ``readOnlyHint: true`` and not ``destructiveHint: true``, else it may change
anything (MCP's defaults)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

from anyio.abc import TaskGroup
from pydantic import ConfigDict

from tether_protocol import CommandPreview

from ..errors import ToolError
from ..tools.base import Proposal, Tool, ToolArgs, ToolDeps, ToolResult
from .names import shown_name
from .results import as_tool_result

if TYPE_CHECKING:
    from .server import McpServer, RemoteTool

SHORT_JSON = 160
"""Arguments up to this long are shown on one line; longer ones indented."""


class McpArgs(ToolArgs):
    """Whatever the model sent: the server checks its own schema."""

    model_config = ConfigDict(extra="allow", frozen=True)


class McpTool(Tool[McpArgs]):
    """One tool of one server (a subclass per tool: ``mcp_tool``)."""

    args_model: ClassVar[type[ToolArgs]] = McpArgs
    needs_approval: ClassVar[bool] = True
    takes_changed_arguments: ClassVar[bool] = False
    """The approval shows the call as text; a changed text is no call the server takes."""

    def __init__(self, server: McpServer, remote: RemoteTool, tasks: TaskGroup) -> None:
        self.server = server
        self.remote = remote
        self.tasks = tasks

    def parameters_schema(self) -> dict[str, Any]:
        return self.remote.input_schema

    async def propose(self, args: McpArgs, deps: ToolDeps) -> Proposal:
        arguments = dict(args.model_extra or {})
        shown = json.dumps(arguments, ensure_ascii=False)
        if len(shown) > SHORT_JSON:
            shown = json.dumps(arguments, ensure_ascii=False, indent=2)
        server = self.server
        return Proposal(
            title=f"MCP {server.name}: {self.remote.name}",
            preview=CommandPreview(
                command=f"{server.name} › {self.remote.name} {shown}",
                cwd=f"MCP server '{server.name}' ({server.where()})",
            ),
            payload=arguments,
            read_only=self.effect == "none" and server.trusts_read_only_hints,
        )

    async def perform(self, args: McpArgs, proposal: Proposal, deps: ToolDeps) -> ToolResult:
        result = await self.server.call(self.tasks, self.remote.name, proposal.payload)
        return as_tool_result(self.server.name, self.remote.name, result)


def effect_of(server: str, remote: RemoteTool) -> dict[str, str]:
    """What the tool may do as its server annotates it (``Tool.effect``, ``effect_note``)."""
    quoted = f"the MCP server {server!r}"
    if remote.destructive_hint:
        return {"effect": "changes", "effect_note": f"{quoted} marks it destructive"}
    if remote.read_only_hint:
        return {"effect": "none"}
    note = f"{quoted} does not mark it read-only (readOnlyHint)"
    return {"effect": "changes", "effect_note": note}


def mcp_tool(name: str, server: McpServer, remote: RemoteTool, tasks: TaskGroup) -> McpTool:
    """The tool ``remote`` of ``server`` under the model-facing ``name``. Its ``description``
    is the server's own text: what the model reads of it (framed, flagged, capped with the
    server's other tools) is made by ``registry.model_specs``."""
    shown = shown_name(server.name, remote.name)
    attributes = {
        "name": name,
        "description": remote.description,
        "label": shown,
        "mcp_name": (server.name, remote.name),
        **effect_of(server.name, remote),
    }
    cls = type("McpTool", (McpTool,), attributes)
    tool: McpTool = cls(server, remote, tasks)
    return tool


__all__ = ["McpArgs", "McpTool", "ToolError", "mcp_tool"]
