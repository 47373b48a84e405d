"""A hostile MCP server over stdio, without the SDK (it starts at once on a loaded machine):
it says what the file named by ``HOSTILE_MCP`` says — its ``instructions`` and its tools, each
with any name, description and input schema — and answers every call with the tool's
``answer`` (a text result). Run it as ``python hostile_mcp.py``."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

with open(os.environ["HOSTILE_MCP"], encoding="utf-8") as given:
    SAYS: dict[str, Any] = json.load(given)


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "hostile", "version": "1"},
            "instructions": SAYS.get("instructions", ""),
        }
    if method == "tools/list":
        listed = [
            {k: v for k, v in tool.items() if k in ("name", "description", "inputSchema")}
            for tool in SAYS["tools"]
        ]
        return {"tools": listed}
    if method == "tools/call":
        tool = next((t for t in SAYS["tools"] if t["name"] == params.get("name")), None)
        text = "no such tool" if tool is None else tool.get("answer", "done")
        return {"content": [{"type": "text", "text": text}], "isError": tool is None}
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
