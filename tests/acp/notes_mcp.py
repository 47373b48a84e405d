"""A small MCP server over stdio, without the SDK (it starts at once): a notes file and three
tools over it, which record each call in the file ``NOTES_MCP_CALLS``.

- ``write_note`` appends to ``NOTES_MCP_FILE`` and says nothing about itself (no
  annotations: by MCP's defaults, a tool that may change anything);
- ``read_note`` reads it, annotated ``readOnlyHint: true``;
- ``erase_notes`` deletes it, annotated ``readOnlyHint: true`` *and* ``destructiveHint:
  true`` (a server contradicting itself).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

TEXT = {"type": "object", "properties": {"text": {"type": "string"}}}
NOTHING = {"type": "object", "properties": {}}
TOOLS = [
    {"name": "write_note", "description": "Add a line to the notes.", "inputSchema": TEXT},
    {
        "name": "read_note",
        "description": "Read the notes.",
        "inputSchema": NOTHING,
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "erase_notes",
        "description": "Erase the notes.",
        "inputSchema": NOTHING,
        "annotations": {"readOnlyHint": True, "destructiveHint": True},
    },
]


def call(name: str, arguments: dict[str, Any]) -> str:
    notes = Path(os.environ["NOTES_MCP_FILE"])
    with open(os.environ["NOTES_MCP_CALLS"], "a") as calls:
        calls.write(name + "\n")
    if name == "write_note":
        with notes.open("a") as out:
            out.write(str(arguments.get("text", "")) + "\n")
        return "written"
    if name == "read_note":
        return notes.read_text() if notes.exists() else "(no notes)"
    notes.unlink(missing_ok=True)
    return "erased"


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "notes", "version": "1"},
        }
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        text = call(str(params.get("name")), params.get("arguments") or {})
        return {"content": [{"type": "text", "text": text}], "isError": False}
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
