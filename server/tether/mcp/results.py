"""An MCP tool result as the model reads it: its text, its structured content as JSON,
a short note for what a model cannot read here (images, audio, binary resources)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..text.cut import cut_middle
from ..tools.base import ToolResult

if TYPE_CHECKING:
    import mcp_types as types

OUTPUT_LIMIT = 30_000
"""Characters of a result the model reads (the middle cut), as for a command's output."""


def as_tool_result(server: str, tool: str, result: types.CallToolResult) -> ToolResult:
    """``result`` as a ``ToolResult``; ``isError`` makes it a failed one."""
    parts = [_block_text(block) for block in result.content]
    structured = result.structured_content
    if structured is not None:
        shown = json.dumps(structured, ensure_ascii=False, indent=1)
        wrapped = structured.get("result") if len(structured) == 1 else None
        if not any(_same_json(part, structured) or part == wrapped for part in parts):
            parts.append(shown)
    output = cut_middle("\n".join(p for p in parts if p) or "(no output)", OUTPUT_LIMIT)
    if result.is_error:
        message = f"MCP server '{server}': {tool} failed: {output}"
        return ToolResult(ok=False, output=message, error=message[:500])
    return ToolResult(ok=True, output=output)


def _same_json(text: str, value: object) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def _block_text(block: object) -> str:
    import mcp_types as types

    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent):
        return f"[an image ({block.mime_type}, {len(block.data) * 3 // 4} bytes) not shown]"
    if isinstance(block, types.AudioContent):
        return f"[audio ({block.mime_type}) not played]"
    if isinstance(block, types.ResourceLink):
        return f"[resource {block.uri}" + (f" — {block.name}" if block.name else "") + "]"
    if isinstance(block, types.EmbeddedResource):
        inner = block.resource
        if isinstance(inner, types.TextResourceContents):
            return f"[resource {inner.uri}]\n{inner.text}"
        return f"[resource {inner.uri}: binary, not shown]"
    return f"[{type(block).__name__} content not shown]"
