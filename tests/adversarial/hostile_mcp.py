"""A hostile MCP server over stdio, without the SDK (it starts at once on a loaded machine):
it says what the file named by ``HOSTILE_MCP`` says — its ``instructions`` and its tools, each
with any name, description and input schema — and answers every call with the tool's
``answer`` (a text result). Run it as ``python hostile_mcp.py``."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for tests/
from tests.stdio_mcp import serve

with open(os.environ["HOSTILE_MCP"], encoding="utf-8") as given:
    SAYS: dict[str, Any] = json.load(given)


def call(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    tool = next((t for t in SAYS["tools"] if t["name"] == name), None)
    return ("no such tool", True) if tool is None else (tool.get("answer", "done"), False)


LISTED = [
    {k: v for k, v in tool.items() if k in ("name", "description", "inputSchema")}
    for tool in SAYS["tools"]
]
serve("hostile", LISTED, call, SAYS.get("instructions", ""))
