"""The one request loop of the tests' small MCP servers over stdio (no SDK: they start at
once, even on a loaded machine). A server script lists its tools and says what a call
answers; ``serve`` does the rest: ``initialize``, ``tools/list``, ``tools/call``, ``ping``,
an error for any other method, nothing for a notification.

Scripts run as ``python path/to/script.py``, so they put the repository on ``sys.path``
(``on_path``) before importing this."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

Call = Callable[[str, dict[str, Any]], "tuple[str, bool]"]
"""A tool's name and arguments → the text it answers and whether that is an error."""


def serve(name: str, tools: list[dict[str, Any]], call: Call, instructions: str = "") -> None:
    """Answer MCP requests on stdin until it closes, as the server ``name``."""

    def answer(method: Any, params: dict[str, Any]) -> dict[str, Any] | None:
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                "capabilities": {"tools": {}},
                "serverInfo": {"name": name, "version": "1"},
            }
            if instructions:
                result["instructions"] = instructions
            return result
        if method == "tools/list":
            return {"tools": tools}
        if method == "tools/call":
            text, failed = call(str(params.get("name")), params.get("arguments") or {})
            return {"content": [{"type": "text", "text": text}], "isError": failed}
        if method == "ping":
            return {}
        return None

    for line in sys.stdin:
        request = json.loads(line)
        if "id" not in request:
            continue  # a notification (initialized, cancelled)
        result = answer(request.get("method"), request.get("params") or {})
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
        if result is None:
            reply["error"] = {"code": -32601, "message": f"unknown method {request.get('method')}"}
        else:
            reply["result"] = result
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
