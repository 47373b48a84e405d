"""The smallest MCP server over stdio, without the SDK (it starts at once, even on a loaded
machine): one tool, ``echo``, which records its calls in the file ``TINY_MCP_CALLS``."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository, for tests/
from tests.stdio_mcp import serve

ECHO = {
    "name": "echo",
    "description": "Say the text back.",
    "inputSchema": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
}


def call(name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
    text = str(arguments.get("text", ""))
    with open(os.environ["TINY_MCP_CALLS"], "a") as calls:
        calls.write(text + "\n")
    return f"echo: {text}", False


serve("tiny", [ECHO], call)
