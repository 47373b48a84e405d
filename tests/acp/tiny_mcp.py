"""The smallest MCP server over stdio, without the SDK (it starts at once, even on a loaded
machine): one tool, ``echo``, which records its calls in the file ``TINY_MCP_CALLS``."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

ECHO = {
    "name": "echo",
    "description": "Say the text back.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "tiny", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": [ECHO]}
    if method == "tools/call":
        text = str(params.get("arguments", {}).get("text", ""))
        with open(os.environ["TINY_MCP_CALLS"], "a") as calls:
            calls.write(text + "\n")
        return {"content": [{"type": "text", "text": f"echo: {text}"}], "isError": False}
    if method == "ping":
        return {}
    return None


for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue  # a notification (initialized, cancelled)
    result = answer(request)
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
    if result is None:
        reply["error"] = {"code": -32601, "message": f"unknown method {request.get('method')}"}
    else:
        reply["result"] = result
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
